"""CPU seconds per sample of the experiment's sampler (`alignment.proof.generate`: k samples per
prompt, cut at the closing fence) with P prompts sharing one batch, on HumanEval's first N held-out
prompts at the arms' temperature and token cap, one torch thread (as a seed's process runs). Each P
runs over the same prompts; P = 1 (the sampler's batch until 2026-11-29) runs first (and then last, so its
two runs show the machine's drift beside the ratios). Prints one JSON line per batch and a table.

    nice -n 5 .venv/bin/python benchmarks/sampling_batch.py --problems 8 --per-batch 1 8 4
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="model dir or hub id (default: the profile's base model)")
    ap.add_argument("--profile", default="qwen-0.5b")
    ap.add_argument("--problems", type=int, default=8, help="HumanEval's first N held-out problems")
    ap.add_argument("--k", type=int, default=2, help="samples per prompt (the experiment's HumanEval k)")
    ap.add_argument("--per-batch", type=int, nargs="+", default=[1, 8, 4], help="prompts per batch, in run order "
                                                                                "(P = 1 is run again at the end)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from alignment_proof import ProofConfig, profile_config

    from perfalign.alignment.models import load_causal_lm, load_tokenizer
    from perfalign.alignment.prompting import model_prompt
    from perfalign.alignment.proof import generate
    from perfalign.evaluation.tasks import humaneval as he

    torch.set_num_threads(a.threads)
    model_name = a.model or profile_config(a.profile).align.base_model
    tok = load_tokenizer(model_name, padding_side="left")
    model = load_causal_lm(model_name, tokenizer=tok).eval()
    cfg = ProofConfig()
    prompts = [model_prompt(tok, he.model_prompt(he.problem(pid))) for pid in he.split("heldout")[:a.problems]]
    order = list(a.per_batch) + ([1] if a.per_batch[0] == 1 else [])  # P = 1 first: again last (drift)
    print(json.dumps({"model": model_name, "problems": a.problems, "k": a.k, "order": order,
                      "max_new_tokens": cfg.humaneval_max_new_tokens, "loadavg_start": os.getloadavg()}), flush=True)
    runs = []
    for run, p in enumerate(order):
        cpu = wall = 0.0
        tokens = steps = samples = 0
        for b in range(0, len(prompts), p):
            w0, c0 = time.time(), time.process_time()
            texts, lengths = generate(model, tok, prompts[b:b + p], a.k, cfg.temperature,
                                      cfg.humaneval_max_new_tokens, 1000 * run + b)
            dc, dw = time.process_time() - c0, time.time() - w0
            cpu, wall, tokens, steps, samples = cpu + dc, wall + dw, tokens + sum(lengths), steps + max(lengths), \
                samples + len(texts)
            print(json.dumps({"run": run, "per_batch": p, "batch": b, "cpu_s": round(dc, 1), "wall_s": round(dw, 1),
                              "new_tokens": lengths}), flush=True)
        runs.append({"run": run, "per_batch": p, "rows": p * a.k, "samples": samples, "cpu_s": round(cpu, 1),
                     "wall_s": round(wall, 1), "new_tokens": tokens, "steps": steps,
                     "cpu_s_per_sample": round(cpu / samples, 2),
                     "cpu_ms_per_new_token": round(1000 * cpu / tokens, 1)})
    ones = [r["cpu_s_per_sample"] for r in runs if r["per_batch"] == 1]
    base = sum(ones) / len(ones) if ones else runs[0]["cpu_s_per_sample"]
    print(json.dumps({"loadavg_end": os.getloadavg()}))
    print("\n| run | prompts per batch | rows | CPU-s per sample | CPU-ms per new token | per sample, x P=1 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in runs:
        print(f"| {r['run']} | {r['per_batch']} | {r['rows']} | {r['cpu_s_per_sample']} | {r['cpu_ms_per_new_token']} "
              f"| {base / r['cpu_s_per_sample']:.2f} |")


if __name__ == "__main__":
    main()
