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
from dataclasses import asdict, dataclass, field

from perfalign.common.plausibility import SpeedupPolicy
from perfalign.measure.harness import ProbeSession, ProbeSettings, ProblemUnusable
from perfalign.sandbox import Sandbox

from .reward import RewardTiers, gflops, tier_of_verdict, tier_reward
from .spec import SpecError, expand_dgemm, parse_spec
from .static import detect_techniques, forbidden_techniques, library_violation, link_violation
from .tasks import GrpoTask


@dataclass
class MeasureSettings:
    """How a rollout is measured (fewer, shorter rounds than evaluation's defaults: RL needs
    many rewards; the probe's precision loop still adds rounds while a time is noisy)."""

    repeats: int = 2
    max_repeats: int = 4
    target_s: float = 0.08          # reference work per timed run
    max_run_s: float = 1.0
    validate_time_s: float = 5.0    # CPU limit of the validation run: a hung program is a timeout
    time_factor: float = 10.0
    target_rel_se: float = 0.05
    peak_n: int = 512               # numpy DGEMM size of the peak measurement
    peak_seconds: float = 0.3
    backend: str = "auto"
    policy: SpeedupPolicy = field(default_factory=SpeedupPolicy)

    def probe_settings(self) -> ProbeSettings:
        return ProbeSettings(repeats=self.repeats, max_repeats=self.max_repeats, target_rel_se=self.target_rel_se,
                             target_s=self.target_s, max_run_s=self.max_run_s, time_factor=self.time_factor,
                             validate_time_s=self.validate_time_s, policy=self.policy, retries=1)


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

    def __init__(self, settings: MeasureSettings) -> None:
        self.settings = settings
        self.sandbox = Sandbox(backend=settings.backend, workers=1)
        self.sessions: dict[str, ProbeSession] = {}
        self.peaks: dict[int, dict] = {}
        self.lock = threading.Lock()

    def session(self, task: GrpoTask) -> ProbeSession:
        s = self.sessions.get(task.key)
        if s is None:
            s = ProbeSession(self.sandbox, task.problem, self.settings.probe_settings())
            s.prepare()
            self.sessions[task.key] = s
        return s

    def peak(self, threads: int) -> dict:
        if threads not in self.peaks:
            self.peaks[threads] = measure_peak(self.settings.peak_n, threads, self.settings.peak_seconds)
        return self.peaks[threads]


def measure_peak(n: int, threads: int, seconds: float = 0.3) -> dict:
    """The machine's practical DGEMM peak on this worker: numpy's BLAS (OpenBLAS) C = A @ B on
    n x n doubles with ``threads`` BLAS threads, on the cores this process is pinned to; the best
    of repeated calls over ``seconds`` (the issue's physical limit; GFLOPS = 2n^3 / t)."""
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


def worker_state(settings: MeasureSettings) -> WorkerState:
    key = hashlib.sha256(repr(asdict(settings)).encode()).hexdigest()
    with _STATE_LOCK:
        if key not in _STATE:
            _STATE[key] = WorkerState(settings)
        return _STATE[key]


def evaluate_rollout(rollout: Rollout, task: GrpoTask, settings: MeasureSettings,
                     tiers: RewardTiers = RewardTiers()) -> dict:
    """The record of one rollout: tier, reward, GFLOPS, peak fraction, naive floor, verdict,
    techniques, timings. Never raises for a bad program (the record says what happened)."""
    t0 = time.perf_counter()
    rec = {**asdict(rollout), "permitted": list(rollout.permitted), "tier": None, "reward": None, "gflops": None,
           "peak_gflops": None, "peak_fraction": None, "naive_gflops": None, "speedup_vs_naive": None,
           "verdict": "", "message": "", "techniques": [], "niche": "", "flags": [], "code_sha": "",
           "worker_pid": os.getpid(), "worker_cpus": sorted(os.sched_getaffinity(0)), "measure_s": None,
           "flops": task.flops}
    tier, why, code, used = static_verdict(rollout)
    rec["techniques"] = sorted(used)
    rec["niche"] = "+".join(sorted(used)) or "scalar"
    rec["code_sha"] = hashlib.sha256(code.encode()).hexdigest()[:16] if code else ""
    if tier is None:
        state = worker_state(settings)
        with state.lock:
            try:
                session = state.session(task)
                score = session.score({"candidate": code})["candidate"]
                peak = state.peak(task.problem.threads)
            except ProblemUnusable as e:
                tier, why = "infrastructure", f"task unusable here: {e}"
                score = peak = None
        if score is not None:
            rec["verdict"], rec["flags"] = score.verdict, list(score.flags)
            rec.update({k: peak[k] for k in ("peak_gflops", "blas")} if peak else {})
            tier, why = tier_of_verdict(score.verdict), score.message
            if score.verdict == "COMPILE_ERROR":
                lib = link_violation(score.message, ("main",))
                if lib:
                    tier, why = "library", f"library violation: {lib}"
            if score.baseline_s:
                rec["naive_gflops"] = gflops(task.flops, score.baseline_s)
            speedup = score.estimate()  # a reward needs a number: a noisy one is kept (flagged)
            if tier == "ok" and speedup is not None and rec["naive_gflops"]:
                # through the plausibility policy: GFLOPS = naive floor x (checked) speedup
                rec["speedup_vs_naive"] = speedup
                rec["gflops"] = rec["naive_gflops"] * speedup
                if rec["peak_gflops"]:
                    rec["peak_fraction"] = rec["gflops"] / rec["peak_gflops"]
    rec["tier"] = tier
    rec["message"] = (why or "")[:2000]
    rec["reward"] = tier_reward(tier, rec["gflops"], rec["peak_gflops"], tiers)
    rec["measure_s"] = time.perf_counter() - t0
    return rec
