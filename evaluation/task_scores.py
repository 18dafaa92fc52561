"""From per-sample results to per (model, task) scores: pass@k (Eq. 9) and speedup_n@k (Eq. 10)."""
from __future__ import annotations

from collections import Counter

from .metrics import pass_at_k, speedup_at_k
from .records import BaselineResult, EvalPrompt, PromptScore, SampleResult, TaskScore


def task_scores(prompts: list[EvalPrompt], samples: list[SampleResult], baselines: dict[str, BaselineResult],
                ks: tuple[int, ...]) -> tuple[list[TaskScore], list[dict]]:
    """Scores of every (model, task) and the prompts excluded because their baseline failed
    (a speedup without a baseline would be made up)."""
    excluded = [{"task": b.task, "prompt_id": b.prompt_id, "reason": f"baseline run failed: {b.verdict} {b.message}"}
                for b in baselines.values() if b.runtime_s is None]
    bad = {e["prompt_id"] for e in excluded}
    by_key: dict[tuple[str, str, str], list[SampleResult]] = {}
    for s in samples:
        if s.prompt_id not in bad:
            by_key.setdefault((s.model, s.task, s.prompt_id), []).append(s)
    timing = {p.task: p.timing for p in prompts}
    order = [p.prompt_id for p in prompts]
    scores: dict[tuple[str, str], TaskScore] = {}
    for model in dict.fromkeys(s.model for s in samples):
        for task in dict.fromkeys(p.task for p in prompts):
            rows = []
            for pid in order:
                group = sorted(by_key.get((model, task, pid), []), key=lambda s: s.index)
                if not group:
                    continue
                n, c = len(group), sum(s.correct for s in group)
                speedups = [s.speedup for s in group]
                valid_ks = [k for k in ks if k <= n]
                rows.append(PromptScore(
                    pid, n, c, {str(k): pass_at_k(n, c, k) for k in valid_ks},
                    {str(k): speedup_at_k(speedups, k) for k in valid_ks}, baselines[pid].runtime_s,
                    speedups, dict(Counter(s.verdict for s in group))))
            if not rows:
                continue
            verdicts = sum((Counter(r.verdicts) for r in rows), Counter())
            scores[(model, task)] = TaskScore(
                model, task, timing[task], len(rows), sum(r.n for r in rows),
                {str(k): sum(r.pass_at[str(k)] for r in rows) / len(rows) for k in ks},
                {str(k): sum(r.speedup_at[str(k)] for r in rows) / len(rows) for k in ks},
                dict(verdicts), rows)
    return list(scores.values()), excluded


def oracle_checks(prompts: list[EvalPrompt], samples: list[SampleResult], oracle_modes: dict[str, str]) -> list[dict]:
    """For oracle pseudo-models: the known speedup of each prompt next to the measured one."""
    by_id = {p.prompt_id: p for p in prompts}
    rows = []
    for s in samples:
        mode = oracle_modes.get(s.model)
        if mode is None or s.index != 0:
            continue
        expected = by_id[s.prompt_id].expected_speedup.get(mode)
        # probe tasks: an honest oracle's own per-call clock is its true speedup
        known = "in-process" if expected is None and s.inprocess_speedup is not None else "known"
        if expected is None:
            expected = s.inprocess_speedup
        rows.append({"model": s.model, "mode": mode, "task": s.task, "prompt_id": s.prompt_id, "correct": s.correct,
                     "verdict": s.verdict, "expected_speedup": expected, "expected_from": known,
                     "measured_speedup": s.speedup, "flags": list(s.flags),
                     "round_speedups": list(s.round_speedups)})
    return rows
