"""The contest protocol: a whole program scored against its baseline measured in the same run, one
implementation for every contest-style score (`perfalign eval score --suite codecontests|humaneval`
through ``score_contest``; the batch evaluation's contest problems and controlled task through
``paired_score``, evaluation/sandbox_jobs.py).

The baseline (the language's median-runtime correct submission, the canonical solution, the
controlled task's medium reference) is re-run beside the candidate, never a runtime stored at
build time, which was measured under other load: ``repeats`` rounds, each running the baseline
and the candidate on all tests once, back to back, in a fresh secret random order (no program
keeps a position or a predecessor). runtime = median over rounds of the mean per-test CPU time
(the sandbox's accounting of every process and thread of the program), or under
``ContestSettings.clock`` instructions / cycles the mean per-test count of both (valgrind); two
more rounds at a time (up to ``max_repeats``) while the speedup's estimate
(``timing_stats.rounds_estimate``: the medians' where precise, else the rounds' paired ratios,
which a busy machine's drift does not move) is less precise than the gate's target; past
``max_repeats`` while the rounds' measured CPU time leaves room in ``round_budget_s``, up to
``max_budget_repeats`` (``timing_stats.rounds_affordable``: short programs get the rounds they need). The speedup
goes through ``common.plausibility.speedup_ratio``, an implausible one re-measured once; under a
count it is checked against the CPU time run beside it (``count_contradicts_cpu``). With several
baseline submissions (a raw source, no recorded runtimes), each is measured and the median one is
used.
"""
from __future__ import annotations

import dataclasses
import random
import secrets
import statistics
from dataclasses import dataclass, field

from perfalign.common.plausibility import SpeedupPolicy, speedup_ratio
from perfalign.sandbox import Job, Limits, RunResult, Sandbox, TestCase, Verdict
from perfalign.sandbox.clock import (
    CONTRADICTED,
    DEFAULT_CLOCK,
    DETERMINISTIC,
    ClockMismatch,
    check_clock,
    count_contradicts_cpu,
    native_cpu_s,
)

from .harness import ProbeScore, ProbeSettings
from .timing_stats import NoiseGate, more_rounds, rounds_affordable, rounds_estimate


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
    max_repeats: int = ProbeSettings.max_repeats  # ...and at most these, while the speedup is imprecise...
    round_budget_s: float = ProbeSettings.round_budget_s  # ...or more while the rounds' CPU time is within this...
    max_budget_repeats: int = ProbeSettings.max_budget_repeats  # ...up to these (timing_stats.rounds_affordable)
    policy: SpeedupPolicy = field(default_factory=SpeedupPolicy)
    # what measures the candidate and the baseline beside it (sandbox.clock); both in the same
    # clock, every round: a recorded runtime is never compared (it stays in info as a note)
    clock: str = DEFAULT_CLOCK

    def __post_init__(self) -> None:
        check_clock(self.clock)

    @classmethod
    def from_probe(cls, probe: ProbeSettings) -> "ContestSettings":
        """The rounds, policy and clock of a profile's [eval.probe] table: one protocol's settings."""
        return cls(probe.repeats, probe.max_repeats, probe.round_budget_s, probe.max_budget_repeats, probe.policy,
                   probe.clock)


def _runtime(res: RunResult) -> float | None:
    """Mean per-test measure in the clock that ran it: the count under instructions / cycles, else
    CPU seconds."""
    vals = [t.cycles if res.clock == "cycles" else t.instructions if res.clock == "instructions" else t.cpu_time_s
            for t in res.tests]
    vals = [float(v) for v in vals if v is not None]
    return sum(vals) / len(vals) if vals and res.ok else None


def _cost_s(res: RunResult) -> float:
    """The seconds a run cost: its tests' CPU time (a count's run included), else their wall time."""
    return sum(t.cpu_time_s if t.cpu_time_s is not None else t.wall_time_s or 0.0 for t in res.tests)


def timed_job(job: Job, clock: str) -> Job:
    """A job as the rounds time it: each test once, on one CPU, stopping at the first failure."""
    return dataclasses.replace(job, repeats=1, stop_on_failure=True, cpus=job.cpus or 1, clock=clock)


def score_contest(sandbox: Sandbox, task: ContestProblem, code: str, settings: ContestSettings | None = None,
                  label: str = "candidate") -> tuple[ProbeScore, dict]:
    """`eval score`: the candidate's correctness and time from the same rounds."""
    def job(src: str) -> Job:
        return Job(src, task.language, task.tests, task.limits)

    # a CodeContests-Perf folder names one baseline; a raw source: measure each, keep the median one
    info = {"problem": task.problem_id, "source": task.source, "language": task.language,
            "baseline_candidates": len(task.baselines)}
    score, more = paired_score(sandbox, [job(b) for b, _ in task.baselines], job(code), settings, label)
    if more.get("baseline_pick") is not None:
        info["baseline_recorded_runtime_s"] = task.baselines[more["baseline_pick"]][1]
    return score, {**info, **{k: v for k, v in more.items() if k.startswith("clock")}}


def paired_score(sandbox: Sandbox, baselines: list[Job], candidate: Job, settings: ContestSettings | None = None,
                 label: str = "candidate") -> tuple[ProbeScore, dict]:
    """The candidate timed beside its baseline(s) in interleaved rounds (the module's protocol).
    Returns its score and what the rounds measured: ``clock`` (and ``clock_fallback``),
    ``baseline_pick`` (the baseline used, None when none ran correctly), ``baseline_runs`` (its
    measure per round) and ``runtimes`` (the candidate's)."""
    s = settings or ContestSettings()
    bases, cand = [timed_job(b, s.clock) for b in baselines], timed_job(candidate, s.clock)
    order = random.Random(secrets.randbits(64))  # the candidate cannot know whether it runs first
    used: set[str] = set()  # the clocks that really measured the runs (a fallback says cpu)
    spent = [0.0]  # the CPU seconds every run of the rounds measured: what more rounds are priced by

    def rounds(n: int, jobs: list[Job]) -> tuple[list[list[RunResult]], list[RunResult]]:
        base_runs: list[list[RunResult]] = [[] for _ in jobs]
        cand_runs: list[RunResult] = []
        for _ in range(n):
            res = _round(sandbox, [*jobs, cand], order)
            for runs, r in zip(base_runs, res):
                runs.append(r)
            cand_runs.append(res[-1])
            used.update(r.clock for r in res if r.ok)
            spent[0] += sum(_cost_s(r) for r in res)
            if not res[-1].ok:
                break
        return base_runs, cand_runs

    base_runs, cand_runs = rounds(s.repeats, bases)
    if len(used) > 1:  # never compare a count with seconds
        raise ClockMismatch(f"{label}: the baseline and the candidate ran under different clocks "
                            f"({', '.join(sorted(used))})")
    unit = next(iter(used), s.clock if s.clock not in DETERMINISTIC else "cpu")
    info: dict = {"clock": unit, "baseline_pick": None, "baseline_runs": [], "runtimes": []}
    if unit != s.clock:
        info["clock_fallback"] = s.clock
    failed = _failure(label, unit, cand_runs)
    if failed:
        return failed, info
    medians = [_median([_runtime(r) for r in runs]) for runs in base_runs]
    usable = [(m, i) for i, m in enumerate(medians) if m is not None]
    if not usable:
        return ProbeScore(label, "NO_BASELINE", True, None, None, None, unit, rounds=len(cand_runs),
                          message="no baseline submission ran correctly here"), info
    _, pick = sorted(usable)[len(usable) // 2]
    base = base_runs[pick]
    while rounds_affordable(len(cand_runs), spent[0], s.max_repeats, s.round_budget_s, s.max_budget_repeats) \
            and more_rounds(rounds_estimate(_pairs(base, cand_runs)), NoiseGate()):
        more_base, more_cands = rounds(2, [bases[pick]])
        base, cand_runs = base + more_base[0], cand_runs + more_cands
        failed = _failure(label, unit, cand_runs)
        if failed:
            return failed, info
    score = _judge(label, unit, base, cand_runs, s.policy)
    if "implausible" in score.flags:
        again_base, again_cands = rounds(s.repeats, [bases[pick]])
        if all(c.ok for c in again_cands) and _pairs(again_base[0], again_cands):
            base, cand_runs = again_base[0], again_cands
            score = _judge(label, unit, base, cand_runs, s.policy)
            score.flags = sorted(set(score.flags) | {"remeasured"})
    info.update(baseline_pick=pick, baseline_runs=[_runtime(r) for r in base],
                runtimes=[_runtime(r) for r in cand_runs])
    return score, info


def _round(sandbox: Sandbox, jobs: list[Job], order: random.Random) -> list[RunResult]:
    """Each job run once, back to back in a fresh random order; the results in the jobs' order."""
    seq = list(range(len(jobs)))
    order.shuffle(seq)
    out: dict[int, RunResult] = {i: sandbox.run_job_retrying(jobs[i]) for i in seq}
    return [out[i] for i in range(len(jobs))]


def _judge(label: str, unit: str, base: list[RunResult], cands: list[RunResult],
           policy: SpeedupPolicy) -> ProbeScore:
    """The score of rounds in which the candidate ran correctly every time."""
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
    checked = speedup_ratio(sc.baseline_s, sc.runtime_s, policy)
    sc.speedup, sc.raw_speedup = checked.value, checked.raw
    sc.flags = sorted(set(checked.flags) | extra | {f for c in cands for f in c.flags
                                                     if f.startswith(("cpu", "clock_fallback"))})
    cpu = _native_speedup(base, cands) if unit in DETERMINISTIC and sc.speedup else None
    if cpu and count_contradicts_cpu(sc.speedup, *cpu):  # faster only under the count: no credit
        sc.message = f"the count says {sc.speedup:.2f}x, the CPU time beside it {cpu[0]:.2f}x: not credited"
        sc.speedup, sc.flags = 0.0, sorted(set(sc.flags) | {CONTRADICTED})
    return sc


def _native_speedup(base: list[RunResult], cands: list[RunResult]) -> tuple[float, float] | None:
    """(baseline / candidate native CPU time run beside the counts, the two sides' relative noise
    added), medians over rounds; None where a run has none."""
    def side(runs: list[RunResult]) -> tuple[float, float] | None:
        got = [native_cpu_s(r.tests) for r in runs if r.ok]
        if not got or any(t is None for t, _ in got):
            return None
        return statistics.median(t for t, _ in got), max(n for _, n in got)
    b, c = side(base), side(cands)
    return (b[0] / c[0], b[1] + c[1]) if b and c and c[0] > 0 else None


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


def _median(xs: list[float | None]) -> float | None:
    ms = [x for x in xs if x is not None]
    return statistics.median(ms) if ms else None


def _pairs(base: list[RunResult], cands: list[RunResult]) -> list[tuple[float, float]]:
    """(baseline, candidate) of each round where both have a measure."""
    return [(b, c) for rb, rc in zip(base, cands) for b, c in [(_runtime(rb), _runtime(rc))]
            if b is not None and c is not None]
