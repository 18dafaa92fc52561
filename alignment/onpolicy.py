"""On-policy preference pairs: a model's own samples on a controlled task's training problems,
executed in the sandbox (``perfdata.controlled.execute_samples``, the one measurement path), the correct
ones paired faster over slower with Eq. 3's margins, as rows of the triplets table."""
from __future__ import annotations

import hashlib
import statistics

from perfalign.common.equations import DEFAULT_MAX_MARGIN, adaptive_margin
from perfalign.common.plausibility import speedup_ratio
from perfalign.perfdata.controlled import LANG, ControlledDataset, execute_samples
from perfalign.perfdata.perf import BuildSettings


def _program_id(problem_id: str, code: str) -> str:
    return f"{problem_id}-own-{hashlib.sha256(code.encode()).hexdigest()[:10]}"


def on_policy_pairs(task: ControlledDataset, samples: dict[str, list[str]], sandbox=None,
                    repeats: int = BuildSettings.repeats, min_speedup: float = 1.5, max_pairs_per_problem: int = 4,
                    split: str = "reward_train", max_margin: float = DEFAULT_MAX_MARGIN) -> list[dict]:
    """Triplet rows (``perfdata.triplets.TRIPLET_SCHEMA``) from the model's own samples
    (problem id -> completion texts), training problems only. Each distinct correct program is
    measured once; a pair needs the slower one ``min_speedup`` times the faster's CPU time (closer
    pairs swap order under a loaded host's noise), and a problem keeps its ``max_pairs_per_problem``
    widest pairs. Incorrect samples and samples without code form no pair."""
    train = {i.problem_id: i for i in task.train}
    if not_train := sorted(set(samples) - set(train)):
        raise ValueError(f"on-policy pairs come from training problems only; not training problems: "
                         f"{', '.join(not_train[:3])}")
    executed, _ = execute_samples(task, samples, sandbox, repeats)
    rows = []
    for pid, runs in executed.items():
        runtime: dict[str, float] = {}
        for code, res in runs:
            if res is not None and res.ok and res.mean_cpu_time_s:
                runtime.setdefault(code, res.mean_cpu_time_s)
        pairs = []
        for f, tf in runtime.items():
            for s, ts in runtime.items():
                ratio = speedup_ratio(ts, tf).value
                if ratio is not None and ratio >= min_speedup:
                    pairs.append((ratio, f, s))
        inst = train[pid]
        for ratio, f, s in sorted(pairs, key=lambda p: -p[0])[:max_pairs_per_problem]:
            fid, sid = _program_id(pid, f), _program_id(pid, s)
            rows.append(dict(unit_id=pid, problem_id=pid, source="contest", language=LANG, problem=inst.statement,
                             prompt=inst.prompt, fast=f, slow=s, fast_id=fid, slow_id=sid,
                             fast_runtime_s=runtime[f], slow_runtime_s=runtime[s], slow_is_correct=True,
                             speedup=ratio, margin=adaptive_margin(runtime[f], runtime[s], is_contest=True,
                                                                   max_margin=max_margin),
                             median_runtime_s=statistics.median(runtime.values()), group_solutions=len(runtime),
                             triplet_id=f"{fid}>{sid.rsplit('-', 1)[-1]}", split=split))
    return rows
