"""Measuring one rollout on a benchmark worker: static checks, then the probe harness
(``measure.harness.ProbeSession``: candidate TU beside the trusted driver, validation on
secret-seeded inputs at two sizes, timed calls compared call by call, null/reference subtracted),
then GFLOPS from the harness's FLOP count, and the machine's peak (numpy/OpenBLAS DGEMM, same
worker, same run) beside it.

State per worker process (a Dask worker runs one rollout at a time): one Sandbox with one slot,
one prepared ProbeSession per task, the peak per thread count. Nothing here imports Prefect.
"""
from __future__ import annotations

import hashlib
import os
import statistics
import threading
import time
from dataclasses import asdict, dataclass

from perfalign.common.outcomes import flag_outcome, judge
from perfalign.measure.harness import ProbeSession, ProbeSettings, ProblemUnusable
from perfalign.sandbox import Sandbox, SandboxSettings
from perfalign.sandbox.clock import DETERMINISTIC

from .reward import WITHHELD_TIER, GrpoRewardTiers, gflops, judge_verdict, tier_reward
from .spec_family import SpecError, expand_dgemm, parse_spec
from .static import detect_techniques, forbidden_techniques, library_violation, link_violation
from .tasks import GrpoTask


@dataclass
class MeasureSettings(ProbeSettings):
    """How a rollout is measured: the probe protocol (fewer, shorter rounds than evaluation's: RL
    needs many rewards; the precision loop still adds rounds while a time is noisy) and the peak.
    Under a count (``clock``) a correct rollout's reward is its speedup over the naive reference
    (reference count / its count), not GFLOPS, which a count cannot give (docs/grpo.md)."""

    repeats: int = 2                # timed rounds at first (null, reference, candidate interleaved)
    max_repeats: int = 4            # at most this many rounds, added while a time is less precise than target_rel_se
    target_s: float = 0.5           # reference work per timed run
    max_run_s: float = 1.0          # cap on one timed run's expected clock time (s), overhead included
    validate_time_s: float = 60.0   # CPU limit of the validation run: a hung program is a timeout
    target_rel_se: float = 0.05     # relative standard error a time is measured to (see max_repeats)
    peak_n: int = 2048              # numpy DGEMM size of the peak measurement
    peak_seconds: float = 0.3       # how long (s) the peak DGEMM is repeated; its best call counts


@dataclass
class Rollout:
    """One completion to reward (what the trainer sends to a worker)."""

    rollout_id: str
    task: str
    completion: str
    permitted: tuple[str, ...]        # techniques the prompt's stage permits
    stage: str = ""
    step: int = 0
    mode: str = "spec"               # "spec": the controlled format, expanded here; "code": C/C++ as written
    arm: str = ""
    seed: int = 0


def completion_code(completion: str, mode: str) -> str:
    """The C of a completion: the spec's expansion (SpecError on a format violation), or the
    code itself (its first fenced block when fenced)."""
    if mode == "spec":
        return expand_dgemm(parse_spec(completion))
    if mode != "code":
        raise ValueError(f"unknown completion mode {mode!r}")
    import re

    m = re.search(r"```[\w+]*\n(.*?)```", completion, re.S)
    code = m.group(1) if m else completion
    if "(" not in code or "{" not in code:
        raise SpecError("no function in the completion")
    return code


def static_verdict(rollout: Rollout) -> tuple[str | None, str, str, frozenset[str]]:
    """(tier or None to go on, reason, code, techniques): the checks that need no build."""
    try:
        code = completion_code(rollout.completion, rollout.mode)
    except SpecError as e:
        return "format", f"format violation: {e}", "", frozenset()
    why = library_violation(code)
    if why:
        return "library", f"library violation: {why}", code, detect_techniques(code)
    used = detect_techniques(code)
    bad = forbidden_techniques(used, frozenset(rollout.permitted))
    if bad:
        return "format", f"forbidden technique(s) in this stage: {', '.join(sorted(bad))}", code, used
    return None, "", code, used


class WorkerState:
    """Per-process measurement state (one program at a time: a lock around everything)."""

    def __init__(self, settings: MeasureSettings, sandbox: SandboxSettings = SandboxSettings()) -> None:
        self.settings = settings
        self.sandbox = Sandbox.from_settings(sandbox, workers=1)
        self.sessions: dict[str, ProbeSession] = {}
        self.peaks: dict[int, dict] = {}
        self.lock = threading.Lock()

    def session(self, task: GrpoTask) -> ProbeSession:
        s = self.sessions.get(task.name)
        if s is None:
            s = ProbeSession(self.sandbox, task.problem, self.settings)
            s.prepare()
            self.sessions[task.name] = s
        return s

    def peak(self, threads: int) -> dict:
        if threads not in self.peaks:
            self.peaks[threads] = measure_peak(self.settings.peak_n, threads, self.settings.peak_seconds)
        return self.peaks[threads]


def measure_peak(n: int, threads: int, seconds: float = 0.3) -> dict:
    """The machine's practical DGEMM peak on this worker: numpy's BLAS (OpenBLAS) C = A @ B on
    n x n doubles with ``threads`` BLAS threads, on the cores this process is pinned to; the best
    of repeated calls over ``seconds`` (the physical limit; GFLOPS = 2n^3 / t)."""
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    with threadpool_limits(limits=threads, user_api="blas"):
        a @ b  # warm-up: thread pool, pages
        times, t_end = [], time.perf_counter() + seconds
        while time.perf_counter() < t_end or len(times) < 3:
            t0 = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t0)
        libs = [f"{i.get('internal_api')}:{i.get('version')}" for i in threadpool_info() if i.get("user_api") == "blas"]
    best = min(times)
    return {"peak_gflops": 2.0 * n ** 3 / best / 1e9, "peak_n": n, "peak_threads": threads,
            "peak_median_gflops": 2.0 * n ** 3 / statistics.median(times) / 1e9, "blas": ",".join(libs),
            "affinity": sorted(os.sched_getaffinity(0))}


_STATE: dict[str, WorkerState] = {}
_STATE_LOCK = threading.Lock()


def worker_state(settings: MeasureSettings, sandbox: SandboxSettings = SandboxSettings()) -> WorkerState:
    key = hashlib.sha256(repr((asdict(settings), sandbox)).encode()).hexdigest()
    with _STATE_LOCK:
        if key not in _STATE:
            _STATE[key] = WorkerState(settings, sandbox)
        return _STATE[key]


def _judge_correct(score, gflops_value: float | None, why: str):
    """(tier, outcome, message) of a correct program: a penalized measurement flag (fast_repeat)
    is a verification failure; no GFLOPS is withheld only where the problem or its reference is
    why (too little work to time, a reference time that is not positive), else penalized."""
    bad = flag_outcome(score.flags)
    if bad is not None:
        return "verification", bad, bad.reason
    if gflops_value is not None:
        return "ok", None, why
    if "unmeasurable" in score.flags and score.runtime_s is None:
        outcome = judge("unmeasurable_problem", score.message)
    elif not score.baseline_s or score.baseline_s <= 0:
        outcome = judge("reference_failed", f"the reference's time here is not positive ({score.baseline_s})")
    else:
        outcome = judge("unmeasured", "correct, but its runs gave no time to reward")
    return (WITHHELD_TIER if outcome.withheld else "verification"), outcome, outcome.reason


def evaluate_rollout(rollout: Rollout, task: GrpoTask, settings: MeasureSettings,
                     tiers: GrpoRewardTiers = GrpoRewardTiers(), sandbox: SandboxSettings = SandboxSettings()) -> dict:
    """The record of one rollout: tier, reward, GFLOPS, peak fraction, naive floor, verdict,
    techniques, timings. Never raises for a bad program (the record says what happened)."""
    t0 = time.perf_counter()
    tier, why, code, used = static_verdict(rollout)
    outcome = judge(tier) if tier else None  # format / library: the candidate's
    rec = {**asdict(rollout), "permitted": list(rollout.permitted), "tier": None, "reward": None, "gflops": None,
           "peak_gflops": None, "peak_fraction": None, "naive_gflops": None, "speedup_vs_naive": None,
           "verdict": "", "message": "", "techniques": sorted(used), "niche": "+".join(sorted(used)) or "scalar",
           "flags": [], "code_sha": hashlib.sha256(code.encode()).hexdigest()[:16] if code else "",
           "worker_pid": os.getpid(), "worker_cpus": sorted(os.sched_getaffinity(0)), "measure_s": None,
           "flops": task.flops, "withheld": False, "cause": ""}
    if tier is None:
        state = worker_state(settings, sandbox)
        with state.lock:
            try:
                session = state.session(task)
                score = session.score({"candidate": code})["candidate"]
                control = None
                if score.verdict == "SANDBOX_ERROR":  # the control: the reference, same sandbox, right after
                    control = session.validate(session.p.reference)[0]
                peak = state.peak(task.problem.threads)
            except ProblemUnusable as e:  # the reference failed its own runs
                outcome = judge("reference_failed", f"task unusable here: {e}")
                tier, why = WITHHELD_TIER, f"task unusable here: {e}"
                score = peak = None
        if score is not None:
            rec["verdict"], rec["flags"] = score.verdict, list(score.flags)
            rec.update({k: peak[k] for k in ("peak_gflops", "blas")} if peak else {})
            tier, outcome = judge_verdict(score.verdict, control)
            why = score.message if not (outcome and outcome.withheld) else f"{outcome.reason}: {score.message}"
            if score.verdict == "COMPILE_ERROR":
                lib = link_violation(score.message, ("main",))
                if lib:
                    tier, why, outcome = "library", f"library violation: {lib}", judge("library")
            speedup = score.estimate()  # a reward needs a number: a noisy one is kept (flagged)
            counted = score.clock in DETERMINISTIC
            if counted:  # runtimes are counts: no GFLOPS; the reward is the speedup over the reference
                rec["flags"] = sorted(set(rec["flags"]) | {f"clock:{score.clock}"})
                if tier == "ok" and speedup is not None:
                    rec["speedup_vs_naive"] = speedup
            elif score.baseline_s:
                rec["naive_gflops"] = gflops(task.flops, score.baseline_s)
            if tier == "ok" and speedup is not None and rec["naive_gflops"]:
                # through the plausibility policy: GFLOPS = naive floor x (checked) speedup
                rec["speedup_vs_naive"] = speedup
                rec["gflops"] = rec["naive_gflops"] * speedup
                if rec["peak_gflops"]:
                    rec["peak_fraction"] = rec["gflops"] / rec["peak_gflops"]
            if tier == "ok":
                tier, outcome, why = _judge_correct(score, rec["speedup_vs_naive"] if counted else rec["gflops"], why)
    rec.update(tier=tier, withheld=bool(outcome and outcome.withheld), cause=outcome.cause if outcome else "",
               message=(why or "")[:2000])
    if "clock:instructions" in rec["flags"] or "clock:cycles" in rec["flags"]:  # no GFLOPS, no peak fraction
        rec["reward"] = tier_reward(tier, rec["speedup_vs_naive"], None, tiers)
    else:
        rec["reward"] = tier_reward(tier, rec["gflops"], rec["peak_gflops"], tiers)
    rec["measure_s"] = time.perf_counter() - t0
    return rec
