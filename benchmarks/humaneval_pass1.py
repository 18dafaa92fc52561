"""pass@1 (greedy, one sample per problem) of a registry model on HumanEval's held-out problems,
each sample scored by `perfalign eval score --suite humaneval`'s path (correctness on the official
and drawn inputs, speedup over the canonical solution measured in the same run). Prints one JSON
line per problem, then the summary (pass@1, mean speedup of the correct ones, CPU seconds).

    nice -n 5 .venv/bin/python benchmarks/humaneval_pass1.py --model qwen2.5-coder-0.5b --problems 8
"""
from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b", help="registry name or model directory")
    ap.add_argument("--problems", type=int, default=8, help="the first N held-out problems")
    ap.add_argument("--max-new-tokens", type=int, default=384)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--out", default=None, help="also write every sample and score to this JSON file")
    a = ap.parse_args()

    import torch

    from perfalign.alignment.models import load_causal_lm, load_tokenizer
    from perfalign.alignment.prompting import model_prompt
    from perfalign.evaluation.records import extract_candidate
    from perfalign.evaluation.score_one import score_candidate
    from perfalign.evaluation.tasks import humaneval as he
    from perfalign.sandbox import Sandbox

    torch.set_num_threads(a.threads)
    t0, c0 = time.time(), time.process_time()
    tok = load_tokenizer(a.model, padding_side="left")
    model = load_causal_lm(a.model, tokenizer=tok).eval()
    load_s = time.time() - t0
    rows = []
    with Sandbox(backend="auto", workers=1) as sb:
        for pid in he.split("heldout")[:a.problems]:
            p = he.problem(pid)
            enc = tok(model_prompt(tok, he.model_prompt(p)), return_tensors="pt")
            g0 = time.process_time()
            with torch.no_grad():
                out = model.generate(**enc, do_sample=False, max_new_tokens=a.max_new_tokens,
                                     pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
            text = tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            gen_cpu = time.process_time() - g0
            code, _, how = extract_candidate(text)
            row = {"problem": pid, "extracted": how, "gen_cpu_s": round(gen_cpu, 1),
                   "new_tokens": int(out.shape[1] - enc["input_ids"].shape[1])}
            if code is None:
                row.update(verdict="NO_CODE", correct=False, speedup=0.0)
            else:
                score, info = score_candidate("humaneval", pid, code, sandbox=sb)
                row.update(score.contract(), scale=info.get("scale"), perf_calls=info.get("perf_calls"))
            print(json.dumps(row), flush=True)
            rows.append({**row, "text": text})
    correct = [r for r in rows if r["correct"]]
    summary = {"model": a.model, "problems": len(rows), "pass@1": round(len(correct) / max(1, len(rows)), 3),
               "correct": [r["problem"] for r in correct],
               "mean_speedup_correct": round(sum(r["speedup"] or 0 for r in correct) / len(correct), 3)
               if correct else None,
               "load_wall_s": round(load_s, 1), "wall_s": round(time.time() - t0, 1),
               "cpu_s": round(time.process_time() - c0, 1)}
    print(json.dumps(summary), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"summary": summary, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
