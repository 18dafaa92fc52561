"""The pilot gate of the idiom experiment (docs/alignment.md, pre-registered): per family, the
held-out share of correct samples at temperature 0.2 must be >= 0.6 and the headroom (correct
minus fast & correct) >= 0.3, else the family is dropped or rephrased before any training.

The samples and their labels come from the library's one path (``alignment.proof``: rows cut at
the closing fence, executed in the sandbox, one row per sample in ``samples.jsonl``, resumable);
this module computes and formats the gate from those rows.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from perfalign.alignment.proof import LABELS

GATE_CORRECT = 0.6
GATE_HEADROOM = 0.3


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a binomial share k/n."""
    from scipy.stats import binomtest

    if n == 0:
        return 0.0, 1.0
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


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
