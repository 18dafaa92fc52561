"""Scoring a contest solution against a baseline measured in the same run (the protocol of
`perfalign eval score --suite codecontests`; its problems come from evaluation/tasks/codecontests.py).

The baseline is the median-runtime correct submission in the candidate's language, re-run beside
the candidate (never a runtime stored at build time, which was measured under other load):
``repeats`` rounds, each running the baseline and the candidate on all tests once, one after the
other. runtime = median over rounds of the mean per-test CPU time (the sandbox's accounting of
every process and thread of the program), or under ``ContestSettings.clock`` instructions / cycles
the mean per-test count of both (valgrind); two more rounds at a time (up to ``max_repeats``) while
the speedup's estimate (``timing_stats.hybrid``, the probe harness's rule: the medians' where
precise, else the rounds' paired ratios, which a busy machine's drift does not move) is less precise
than the gate's target; the speedup goes through
``common.plausibility.speedup_ratio``, an implausible one re-measured once. With several baseline
submissions (a raw source, no recorded runtimes), each is measured and the median one is used.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from perfalign.common.plausibility import SpeedupPolicy, speedup_ratio
from perfalign.sandbox import Job, Limits, RunResult, Sandbox, TestCase, Verdict
from perfalign.sandbox.clock import DEFAULT_CLOCK, DETERMINISTIC, ClockMismatch, check_clock

from .harness import ProbeScore, ProbeSettings
from .timing_stats import NoiseGate, more_rounds, rounds_estimate


@dataclass
class ContestProblem:
    problem_id: str
    tests: list[TestCase]
    limits: Limits
    baselines: list[tuple[str, float | None]]   # (solution, recorded runtime or None), the language's correct ones
    language: str
    source: str
    description: str = ""


@dataclass
class ContestSettings:
    repeats: int = ProbeSettings.repeats  # rounds, as the probe harness's...
    max_repeats: int = ProbeSettings.max_repeats  # ...and at most these, while the speedup is imprecise
    policy: SpeedupPolicy = field(default_factory=SpeedupPolicy)
    # what measures the candidate and the baseline beside it (sandbox.clock); both in the same
    # clock, every round: a recorded runtime is never compared (it stays in info as a note)
    clock: str = DEFAULT_CLOCK

    def __post_init__(self) -> None:
        check_clock(self.clock)


def _runtime(res: RunResult) -> float | None:
    """Mean per-test measure in the clock that ran it: the count under instructions / cycles, else
    CPU seconds."""
    vals = [t.cycles if res.clock == "cycles" else t.instructions if res.clock == "instructions" else t.cpu_time_s
            for t in res.tests]
    vals = [float(v) for v in vals if v is not None]
    return sum(vals) / len(vals) if vals and res.ok else None


def score_contest(sandbox: Sandbox, task: ContestProblem, code: str, settings: ContestSettings | None = None,
                  label: str = "candidate") -> tuple[ProbeScore, dict]:
    s = settings or ContestSettings()

    def job(src: str) -> Job:
        return Job(src, task.language, task.tests, task.limits, repeats=1, stop_on_failure=True, cpus=1,
                   clock=s.clock)

    used: set[str] = set()  # the clocks that really measured the runs (a fallback says cpu)

    def rounds(n: int, baselines: list[str]) -> tuple[list[list[float | None]], list[RunResult]]:
        base_times: list[list[float | None]] = [[] for _ in baselines]
        cand_runs = []
        for _ in range(n):
            for i, b in enumerate(baselines):
                r = sandbox.run_job_retrying(job(b))
                used.update([r.clock] if r.ok else [])
                base_times[i].append(_runtime(r))
            cand_runs.append(sandbox.run_job_retrying(job(code)))
            used.update([cand_runs[-1].clock] if cand_runs[-1].ok else [])
            if not cand_runs[-1].ok:
                break
        return base_times, cand_runs

    # a CodeContests-Perf folder names one baseline; a raw source: measure each, keep the median one
    sources = [b for b, _ in task.baselines]
    info = {"problem": task.problem_id, "source": task.source, "language": task.language, "clock": s.clock,
            "baseline_candidates": len(sources)}
    base_times, cand_runs = rounds(s.repeats, sources)
    if len(used) > 1:  # never compare a count with seconds
        raise ClockMismatch(f"{task.problem_id}: the baseline and the candidate ran under different clocks "
                            f"({', '.join(sorted(used))})")
    unit = next(iter(used), s.clock if s.clock not in DETERMINISTIC else "cpu")
    info["clock"] = unit
    if unit != s.clock:
        info["clock_fallback"] = s.clock
    failed = _failure(label, unit, cand_runs)
    if failed:
        return failed, info
    medians = [statistics.median(x for x in ts if x is not None) if any(x is not None for x in ts) else None
               for ts in base_times]
    usable = [(m, i) for i, m in enumerate(medians) if m is not None]
    if not usable:
        return ProbeScore(label, "NO_BASELINE", True, None, None, None, unit, rounds=len(cand_runs),
                          message="no baseline submission ran correctly here"), info
    _, pick = sorted(usable)[len(usable) // 2]
    info["baseline_recorded_runtime_s"] = task.baselines[pick][1]

    def judge(base: list[float | None], cands: list[RunResult]) -> ProbeScore:
        sc = ProbeScore(label, "OK", True, None, None, None, unit, rounds=len(cands))
        pairs = _pairs(base, cands)
        sc.baseline_s = statistics.median(b for b, _ in pairs)
        sc.runtime_s = statistics.median(c for _, c in pairs)
        sc.round_speedups = [round(b / c, 4) for b, c in pairs if c]
        est = rounds_estimate(pairs)
        sc.rel_se = None if est.rel_se is None else round(est.rel_se, 4)
        extra = set()
        if est.rule == "paired":  # the medians carried the machine's drift; the rounds' ratios did not
            sc.runtime_s, extra = sc.baseline_s / est.speedup, {"paired_timing"}
        if sc.rel_se is not None and sc.rel_se > 2 ** 0.5 * NoiseGate.target_rel_se:
            extra.add("imprecise_timing")
        checked = speedup_ratio(sc.baseline_s, sc.runtime_s, s.policy)
        sc.speedup, sc.raw_speedup = checked.value, checked.raw
        sc.flags = sorted(set(checked.flags) | extra | {f for c in cands for f in c.flags
                                                         if f.startswith(("cpu", "clock_fallback"))})
        return sc

    base = base_times[pick]
    while len(cand_runs) < s.max_repeats and more_rounds(rounds_estimate(_pairs(base, cand_runs)), NoiseGate()):
        more_base, more_cands = rounds(2, [sources[pick]])
        base, cand_runs = base + more_base[0], cand_runs + more_cands
        failed = _failure(label, unit, cand_runs)
        if failed:
            return failed, info
    score = judge(base, cand_runs)
    if "implausible" in score.flags:
        again_base, again_cands = rounds(s.repeats, [sources[pick]])
        if all(c.ok for c in again_cands):
            score = judge(again_base[0], again_cands)
            score.flags = sorted(set(score.flags) | {"remeasured"})
    return score, info


def _failure(label: str, unit: str, cands: list[RunResult]) -> ProbeScore | None:
    """The score of a candidate whose run failed (the first failure's verdict), else None."""
    r = next((r for r in cands if not r.ok), None)
    if r is None:
        return None
    score = ProbeScore(label, r.verdict.value, False, 0.0, None, None, unit, rounds=len(cands))
    t = next((t for t in r.tests if t.verdict is not Verdict.OK), None)
    message = r.compile.message if r.verdict is Verdict.COMPILE_ERROR else (t.message if t else r.message)
    score.message = message[:2000]
    score.flags = list(r.flags)
    return score


def _pairs(base: list[float | None], cands: list[RunResult]) -> list[tuple[float, float]]:
    """(baseline, candidate) of each round where both have a measure."""
    return [(b, c) for b, r in zip(base, cands) for c in [_runtime(r)] if b is not None and c is not None]
