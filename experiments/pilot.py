"""The pilot gate of the idiom experiment (docs/alignment.md, pre-registered): per family, the
held-out share of correct samples at temperature 0.2 must be >= 0.6 and the headroom (correct
minus fast & correct) >= 0.3, else the family is dropped or rephrased before any training.

Each held-out prompt's samples are generated in one batch (rows stop at the closing fence),
executed in the sandbox (``controlled.execute_samples``, the one measurement path) and appended
to ``samples.jsonl`` as they are classified: a killed run resumes at the next prompt. Every
prompt is sampled with the seed ``seed + its index`` (common random numbers across models).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

GATE_CORRECT = 0.6
GATE_HEADROOM = 0.3
LABELS = ("fast_correct", "slow_correct", "incorrect", "no_code")


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a binomial share k/n."""
    from scipy.stats import binomtest

    if n == 0:
        return 0.0, 1.0
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def label(result, threshold_s: float) -> str:
    """A sample's class from its sandbox result (None: no code in the text)."""
    if result is None:
        return "no_code"
    if not result.ok:
        return "incorrect"
    return "fast_correct" if result.mean_cpu_time_s < threshold_s else "slow_correct"


def prompt_votes(rows: list[dict]) -> dict[str, Counter]:
    """Per family, prompts whose samples are mostly (more than half) correct, and mostly fast &
    correct: a prompt's samples at a low temperature are nearly copies, so the prompt is the unit.
    Also prompts with at least one fast & correct sample: what best-of-k, RFT and RLPF can reach."""
    by_prompt: dict[tuple[str, str], Counter] = {}
    for r in rows:
        by_prompt.setdefault((r["family"], r.get("problem_id")), Counter())[r["label"]] += 1
    out: dict[str, Counter] = {}
    for (fam, _), c in by_prompt.items():
        n = sum(c.values())
        out.setdefault(fam, Counter()).update(prompts=1, correct=int(2 * (c["fast_correct"] + c["slow_correct"]) > n),
                                              fast_correct=int(2 * c["fast_correct"] > n),
                                              any_fast_correct=int(c["fast_correct"] > 0))
    return out


def gate_table(rows: list[dict], verdict: bool = True) -> list[dict]:
    """Per family (and all together): counts, shares with Wilson intervals, and the verdict (on the
    samples, as pre-registered; left out when ``verdict`` is false). Headroom's interval is the
    slow-correct share's: correct - fast & correct is exactly it. Beside them the same with the
    prompt as the unit (``prompt_votes``)."""
    fams: dict[str, Counter] = {}
    for r in rows:
        fams.setdefault(r["family"], Counter())[r["label"]] += 1
    votes = prompt_votes(rows)
    out = []
    for fam, c in sorted(fams.items()) + [("all", sum(fams.values(), Counter()))]:
        n = sum(c.values())
        correct, fast = c["fast_correct"] + c["slow_correct"], c["fast_correct"]
        row = {"family": fam, "samples": n, **{k: c[k] for k in LABELS},
               "correct": correct, "correct_share": correct / n, "correct_ci": wilson(correct, n),
               "fast_correct_share": fast / n, "fast_correct_ci": wilson(fast, n),
               "headroom": (correct - fast) / n, "headroom_ci": wilson(correct - fast, n),
               "incorrect_share": c["incorrect"] / n, "incorrect_ci": wilson(c["incorrect"], n)}
        if verdict:
            row["passes"] = row["correct_share"] >= GATE_CORRECT and row["headroom"] >= GATE_HEADROOM
        v = votes[fam] if fam != "all" else sum(votes.values(), Counter())
        m, pc, pf, pa = v["prompts"], v["correct"], v["fast_correct"], v["any_fast_correct"]
        row.update(prompts=m, prompts_correct=pc, prompts_fast_correct=pf, prompts_any_fast_correct=pa,
                   prompt_correct_ci=wilson(pc, m), prompt_fast_correct_ci=wilson(pf, m),
                   prompt_headroom_ci=wilson(pc - pf, m), prompt_any_fast_correct_ci=wilson(pa, m))
        out.append(row)
    return out


def gate_families(path: str | Path) -> tuple[str, ...]:
    """The families a gate.json passed (its verdicts, as pre-registered), in its order."""
    table = json.loads(Path(path).read_text())["table"]
    if any("passes" not in r for r in table):
        raise SystemExit(f"{path} holds no gate verdicts (a table.json of training prompts?)")
    return tuple(r["family"] for r in table if r["family"] != "all" and r["passes"])


def _ci(r: dict, key: str) -> str:
    lo, hi = r[f"{key}_ci"]
    return f"{r[f'{key}_share' if key != 'headroom' else key]:.2f} [{lo:.2f}, {hi:.2f}]"


def format_gate(table: list[dict]) -> str:
    def by_prompt(r, key, k):
        lo, hi = r[f"prompt_{key}_ci"]
        return f"{k}/{r['prompts']} [{lo:.2f}, {hi:.2f}]"

    lines = [f"family | n | fast&correct / slow&correct / incorrect / no code | correct (>= {GATE_CORRECT}) | "
             f"fast & correct | headroom (>= {GATE_HEADROOM}) | gate | prompts (majority): correct | "
             "fast & correct | headroom", "--- | --- | --- | --- | --- | --- | --- | --- | --- | ---"]
    for r in table:
        verdict = "" if r["family"] == "all" else ("pass" if r["passes"] else "FAIL")
        pc, pf = r["prompts_correct"], r["prompts_fast_correct"]
        lines.append(f"{r['family']} | {r['samples']} | " + " / ".join(str(r[k]) for k in LABELS)
                     + f" | {_ci(r, 'correct')} | {_ci(r, 'fast_correct')} | {_ci(r, 'headroom')} | {verdict} | "
                     + f"{by_prompt(r, 'correct', pc)} | {by_prompt(r, 'fast_correct', pf)} | "
                     + by_prompt(r, "headroom", pc - pf))
    return "\n".join(lines)


def format_reach(table: list[dict]) -> str:
    """The table without a verdict (training prompts, the arms' temperature): shares of fast &
    correct, slow & correct and incorrect samples, and prompts with at least one fast & correct."""
    lines = ["family | n | fast&correct / slow&correct / incorrect / no code | fast & correct | slow & correct | "
             "incorrect | prompts with >= 1 fast & correct", "--- | --- | --- | --- | --- | --- | ---"]
    for r in table:
        lo, hi = r["prompt_any_fast_correct_ci"]
        lines.append(f"{r['family']} | {r['samples']} | " + " / ".join(str(r[k]) for k in LABELS)
                     + f" | {_ci(r, 'fast_correct')} | {_ci(r, 'headroom')} | {_ci(r, 'incorrect')} | "
                     + f"{r['prompts_any_fast_correct']}/{r['prompts']} [{lo:.2f}, {hi:.2f}]")
    return "\n".join(lines)


class FenceStop:
    """A row is done once its new text holds a closing code fence (two ``` in all)."""

    def __init__(self, tokenizer, prompt_len: int):
        self.tokenizer, self.prompt_len = tokenizer, prompt_len

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_len:], skip_special_tokens=True)
        return torch.tensor([t.count("```") >= 2 for t in texts], device=input_ids.device)


def generate(model, tokenizer, prompt: str, n: int, temperature: float, max_new_tokens: int,
             seed: int) -> tuple[list[str], list[int]]:
    """``n`` samples of one prompt in one batch (top-k 0, top-p 1), each cut at its closing fence;
    their texts and new-token counts."""
    import torch
    from transformers import StoppingCriteriaList

    torch.manual_seed(seed)
    enc = tokenizer([prompt] * n, return_tensors="pt")
    plen = enc["input_ids"].shape[1]
    with torch.no_grad():
        out = model.generate(**enc, do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
                             max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                             eos_token_id=tokenizer.eos_token_id,
                             stopping_criteria=StoppingCriteriaList([FenceStop(tokenizer, plen)]))
    new = out[:, plen:]
    lengths = [int((row != tokenizer.pad_token_id).sum()) for row in new]
    texts = tokenizer.batch_decode(new, skip_special_tokens=True)
    return [t[:_fence_end(t)] for t in texts], lengths


def _fence_end(text: str) -> int:
    """The end of the closing fence (the text's end when there is none)."""
    first = text.find("```")
    close = text.find("```", first + 3) if first >= 0 else -1
    return len(text) if close < 0 else close + 3


def interleaved(instances: list) -> list:
    """One instance of each family first, then the second of each, and so on (stable)."""
    seen: Counter = Counter()
    keyed = []
    for inst in instances:
        keyed.append((seen[inst.family.name], len(keyed), inst))
        seen[inst.family.name] += 1
    return [inst for *_, inst in sorted(keyed, key=lambda x: x[:2])]


def read_samples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def run_pilot(task, model_name: str, out: Path, instances: list, samples_per_prompt: int, temperature: float = 0.2,
              max_new_tokens: int = 192, seed: int = 0, sandbox=None, threads: int = 1) -> list[dict]:
    """Sample and classify every instance's prompt not yet in ``out/samples.jsonl``; all rows."""
    import torch

    from perfalign.alignment.models import load_causal_lm, load_tokenizer
    from perfalign.alignment.prompting import model_prompt
    from perfalign.perfdata.controlled import execute_samples

    out.mkdir(parents=True, exist_ok=True)
    path = out / "samples.jsonl"
    done = {r["problem_id"] for r in read_samples(path)}
    todo = [(i, inst) for i, inst in enumerate(instances) if inst.problem_id not in done]
    if todo:
        torch.set_num_threads(threads)
        tok = load_tokenizer(model_name, padding_side="left")
        model = load_causal_lm(model_name, tokenizer=tok).eval()
    for i, inst in todo:
        pid = inst.problem_id
        w0, c0 = time.time(), time.process_time()
        texts, lengths = generate(model, tok, model_prompt(tok, inst.prompt), samples_per_prompt, temperature,
                                  max_new_tokens, seed + i)
        gen = {"wall_s": time.time() - w0, "cpu_s": time.process_time() - c0, "new_tokens": sum(lengths),
               "batch_steps": max(lengths)}
        executed, _ = execute_samples(task, {pid: texts}, sandbox)
        with path.open("a") as f:
            for j, (text, n_tok, (code, res)) in enumerate(zip(texts, lengths, executed[pid])):
                f.write(json.dumps({"problem_id": pid, "family": inst.family.name, "sample": j, "seed": seed + i,
                                    "temperature": temperature, "label": label(res, task.threshold_s(pid)),
                                    "verdict": res.verdict.value if res is not None else None,
                                    "cpu_time_s": res.mean_cpu_time_s if res is not None else None,
                                    "threshold_s": task.threshold_s(pid), "new_tokens": n_tok,
                                    "prompt_generation": gen, "text": text}) + "\n")
        print(f"{pid}: {Counter(label(r, task.threshold_s(pid)) for _, r in executed[pid])} "
              f"generated {gen['new_tokens']} tokens in {gen['wall_s']:.0f} s wall, {gen['cpu_s']:.0f} CPU-s",
              flush=True)
    return read_samples(path)
