"""Scoring a candidate ``ModelNew`` against a KernelBench problem, every program in the sandbox.

One sandboxed execution (``Job``, python3 with the ``torch`` toolchain) per score holds one test
per candidate, each from a clean state, all under the same secret seed (``kernelenv/guest/``).
In each, the eager reference is first timed alone (no candidate code exists yet: the machine's
own noise), then the candidate and the reference are timed in interleaved rounds, in a fresh
random order each round, until the estimate a score reports is precise to the target: the one
measurement protocol, its statistics and its estimate in ``measure/timing_stats.py`` (the probe harness's and
the contest protocol's: the medians where precise, else the rounds' paired ratios). The ``torch.compile``
baseline (cold Inductor compile: ~20 s of CPU) is a separate trusted execution (compiled against
eager, the same rounds) cached per problem, scale and host; its compile/eager ratio is applied to
the eager time of the candidate's own run. Speedups go through ``common.plausibility``.

The noise gate (``judge_timing``) and whose fault the noise is: a speedup whose combined error
(or the gap between its two estimates) is above the gate's limit is withheld (flag
``unmeasurable``, reward None) only when the trusted reference, timed alone before the candidate
existed, was as noisy: the machine's fault. Otherwise the noise is the candidate's own (it ran
beside the reference and may have caused it): flag ``erratic_timing``, and its speedup is taken
at a pessimistic bound, so noise never raises a reward.
"""
from __future__ import annotations

import hashlib
import json
import math
import platform
import secrets
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perfalign.common.fileio import atomic_write_json
from perfalign.common.paths import cache_root
from perfalign.common.plausibility import SpeedupPolicy, speedup_ratio
from perfalign.measure import timing_stats
from perfalign.measure.timing_stats import NoiseGate
from perfalign.sandbox import Job, Limits, Sandbox, SandboxSettings, TestCase, Verdict, environments
from perfalign.sandbox.calibration import boot_id, cpu_model
from perfalign.sandbox.shipping import bundle

from . import static
from .metrics import kernel_reward
from .problems import KernelProblem

# the sandboxed program: the guest package, with what it shares with the host (the size rules and
# the output comparison; the measurement protocol's statistics), shipped as one file
GUEST = ("perfalign.kernelenv.guest", "perfalign.kernelenv.sizes", "perfalign.measure.timing_stats")
REPORT_PREFIX = "PERFALIGN-REPORT "

# the flag of a baseline_error the trusted side established: the reference failed alone (its scale
# calibration, or its own run in the driver before any candidate code existed)
REFERENCE_FAILED = "reference_failed"


class KernelEnvError(RuntimeError):
    """The environment cannot score here (no torch for the sandbox, no device): nothing was scored."""


@dataclass(frozen=True)
class ScoreConfig:
    device: str = "cpu"             # cpu; cuda is refused (the sandbox passes no GPU through yet)
    scale: float | None = None      # None: auto, the largest 2**-k with one eager call <= target_s
    target_s: float = 0.020         # auto scale: one eager reference call takes at most this long (s)
    round_target_s: float = 0.010   # each model's share of a timed round: at least this much work (calls per round)
    threads: int = 1                # torch threads and OMP_NUM_THREADS, for baselines and candidates
    trials: int = 30                # at most this many timed rounds (fresh inputs each, both models)
    min_trials: int = 5             # at least this many rounds; more while a median misses the gate's target
    time_budget_s: float = 1.0      # no round is added past this much measured wall time (s) per model
    gate: NoiseGate = NoiseGate()   # the measurement layer's noise gate (imprecise / unmeasurable)
    warmups: int = 3                # untimed calls of each model before the timed rounds
    correctness_trials: int = 5     # calls checked against the reference before timing (fresh inputs each)
    revalidation_trials: int = 2    # calls checked against the reference again after the timed rounds
    randomize_shapes: bool = True   # correctness calls also on varied sizes (a kernel fixed to one shape fails)
    compile_baseline: bool = True   # also time torch.compile (Inductor) for speedup_compile (cached)
    fresh_baselines: bool = False   # measure the torch.compile baseline again instead of its cached value
    baseline_max_age_s: float = 6 * 3600  # a cached torch.compile baseline older than this (s) is measured again
    allow_reference_ops: bool = False  # let a candidate use the reference's own torch ops (off: flagged as a hack)
    interpret: bool = False         # TRITON_INTERPRET=1 in the model server (Triton on CPU, correctness only)
    call_timeout_s: float = 10.0    # wall deadline (s) per call, plus 100x the reference's time per call
    first_call_timeout_s: float = 60.0  # a candidate's first call's extra deadline (s, Triton JIT); torch.compile: 600
    time_limit_s: float = 600.0     # CPU seconds per sandboxed execution (both processes, everything)
    memory_mb: int = 4096           # memory limit (MB) of each sandboxed execution
    flush_bytes: int = 16 << 20     # buffer touched on every CPU before each call to evict L1/L2 (bytes)
    policy: SpeedupPolicy = SpeedupPolicy()

    def __post_init__(self) -> None:
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be cpu or cuda, not {self.device!r}")
        if self.scale is not None and not 0 < self.scale <= 1:
            raise ValueError(f"scale must be in (0, 1], not {self.scale!r}")
        if self.trials < 1 or self.min_trials < 1 or self.correctness_trials < 1 or self.threads < 1:
            raise ValueError("trials, min_trials, correctness_trials and threads must be >= 1")


@dataclass
class KernelScore:
    problem: str
    candidate: str
    verdict: str
    correct: bool
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    runtime_s: float | None = None       # median CPU seconds per call of the candidate
    eager_s: float | None = None         # the reference's, in the same interleaved rounds
    compile_s: float | None = None
    flags: list[str] = field(default_factory=list)
    reward: float | None = None
    message: str = ""
    level: int | None = None
    scale: float | None = None
    sizes: dict = field(default_factory=dict)
    device: str = "cpu"
    threads: int = 1
    trials: int = 0
    correctness: list = field(default_factory=list)
    times_s: list = field(default_factory=list)
    eager_times_s: list = field(default_factory=list)   # the reference's per round, beside times_s
    alone_times_s: list = field(default_factory=list)   # the reference's per round, timed alone first
    timing: dict = field(default_factory=dict)          # the gate's numbers (rel_se, shift, rounds...)
    reference_ops: dict = field(default_factory=dict)
    candidate_ops: list = field(default_factory=list)
    candidate_compile_s: list = field(default_factory=list)
    baseline: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def hack_flags(self) -> list[str]:
        return [f for f in self.flags if f.startswith("hack:")]

    @property
    def accepted(self) -> bool:
        """Correct and not flagged as a hack: what the metrics count as solved."""
        return self.correct and not self.hack_flags

    def to_dict(self) -> dict:
        return asdict(self)


def _median(xs):
    return statistics.median(xs) if xs else None


def parse_report(output: str | None, nonce: str) -> dict | None:
    """The driver's report: the line with our nonce (nothing else can know it)."""
    for line in (output or "").splitlines():
        if line.startswith(REPORT_PREFIX):
            try:
                data = json.loads(line[len(REPORT_PREFIX):])
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict) and data.get("nonce") == nonce:
                return data
    return None


class Scorer:
    """Scores candidates; holds the sandbox and the host caches (scales, compile baselines).
    ``sandbox``: an open one (shared, not closed here) or the run's [sandbox] settings to open
    one with."""

    def __init__(self, config: ScoreConfig = ScoreConfig(),
                 sandbox: Sandbox | SandboxSettings = SandboxSettings(), cache_dir: Path | None = None) -> None:
        site = environments.torch_site()
        if site.dir is None:
            raise KernelEnvError(site.reason)
        if config.device == "cuda":
            raise KernelEnvError("device cuda: the sandbox does not pass GPUs through yet (bwrap's /dev holds no "
                                 "/dev/nvidia*); the GPU path is not available on this host")
        self.config = config
        self.torch_version = site.version
        self._own = isinstance(sandbox, SandboxSettings)
        # one slot: a score's rounds are timed with nothing of ours running beside them
        self.sandbox = Sandbox.from_settings(sandbox, workers=1) if self._own else sandbox
        self.cache = (cache_dir or cache_root()) / "kernels"
        self.guest = bundle(*GUEST)
        self.guest_key = hashlib.sha256(self.guest.encode()).hexdigest()[:12]

    def close(self) -> None:
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> "Scorer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ sandboxed executions
    def _run(self, inputs: list[dict]):
        # output_mb is RLIMIT_FSIZE, which also bounds the shared-memory file of the inputs and outputs
        c = self.config
        threads = str(c.threads)
        job = Job(self.guest, "python3", [TestCase(json.dumps(i)) for i in inputs],
                  Limits(time_s=c.time_limit_s, memory_mb=c.memory_mb, output_mb=1024, processes=64,
                         wall_guard_factor=2.0, wall_guard_s=60.0),
                  keep_output=True, toolchain=environments.TORCH_TOOLCHAIN,
                  env={"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
                       "TORCHINDUCTOR_COMPILE_THREADS": "1"})
        return self.sandbox.run_job_retrying(job)  # infrastructure faults: the sandbox's retries

    def _driver_input(self, problem_source: str, role: str, seed: int, nonce: str, **extra) -> dict:
        c = self.config
        return {"mode": "score", "role": role, "problem": problem_source, "seed": seed, "nonce": nonce,
                "device": c.device, "threads": c.threads, "trials": c.trials, "min_trials": c.min_trials,
                "time_budget_s": c.time_budget_s, "warmups": c.warmups, "correctness_trials": c.correctness_trials,
                "revalidation_trials": c.revalidation_trials, "randomize_shapes": c.randomize_shapes,
                "flush_bytes": c.flush_bytes, "call_timeout_s": c.call_timeout_s,
                "gate": asdict(c.gate), "round_target_s": c.round_target_s,
                **({"first_call_timeout_s": c.first_call_timeout_s} if role == "candidate" else {}), **extra}

    def _cached(self, kind: str, parts: list) -> tuple[Path, dict | None]:
        """The cache file keyed by ``parts`` under ``kind``, and its content (None: absent or unreadable)."""
        path = self.cache / kind / f"{hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]}.json"
        try:
            return path, json.loads(path.read_text())
        except (OSError, ValueError):
            return path, None

    # ------------------------------------------------------------------ scale
    def scale_for(self, problem: KernelProblem) -> tuple[float, dict]:
        """The configured scale, or the auto scale (calibrated in the sandbox, cached per host)."""
        if self.config.scale is not None:
            return self.config.scale, {"mode": "fixed"}
        c = self.config
        path, hit = self._cached("scales", [problem.key, c.threads, c.target_s, self.torch_version, self.guest_key,
                                            platform.node(), cpu_model()])
        if hit and "scale" in hit:
            return hit["scale"], {**hit, "mode": "auto", "cached": True}
        nonce = secrets.token_hex(16)
        res = self._run([{"mode": "calibrate", "problem": problem.source, "threads": c.threads,
                          "target_s": c.target_s, "nonce": nonce}])
        rep = parse_report(res.tests[0].output if res.tests else None, nonce)
        if not rep or not rep.get("choice"):
            why = (rep or {}).get("tried") or res.message or (res.tests[0].message if res.tests else "")
            raise ScaleError(f"{problem.name}: no scale works for this problem: {str(why)[-1500:]}")
        info = {"scale": rep["choice"]["scale"], "eager_s": rep["choice"]["seconds"], "tried": rep["tried"]}
        atomic_write_json(path, info)
        return info["scale"], {**info, "mode": "auto", "cached": False}

    # ------------------------------------------------------------------ compile baseline
    def baselines(self, problem: KernelProblem, scale: float) -> dict:
        """Eager and torch.compile medians of a trusted run (cached per problem, scale and boot)."""
        c = self.config
        path, hit = self._cached("baselines", [problem.key, scale, c.threads, c.device, self.torch_version,
                                               self.guest_key, boot_id(), c.trials, c.time_budget_s])
        if hit and not c.fresh_baselines and time.time() - hit.get("measured_at", 0) <= c.baseline_max_age_s:
            return {**hit, "cached": True}
        seed, nonce = secrets.randbits(62), secrets.token_hex(16)
        source = problem.scaled_source(scale)
        # nominal shapes only: a second shape would make Inductor recompile a dynamic-shape graph.
        # One test: eager alone, then compiled against eager in interleaved rounds
        res = self._run([self._driver_input(source, "compiled", seed, nonce, randomize_shapes=False, trace=False)])
        rep = parse_report(res.tests[0].output, nonce) if res.tests else None
        out = {"measured_at": time.time(), "eager_s": None, "compile_s": None, "message": ""}
        k = max(1, int((rep or {}).get("calls_per_round", 1)))  # per round: k calls of each model
        if rep and rep.get("reference_alone_cpu_s"):
            out["eager_s"] = _median(rep["reference_alone_cpu_s"]) / k
        if rep and rep.get("status") == "ok":  # the one protocol's estimate of compiled against eager
            est = timing_stats.rounds_estimate(list(zip(rep["reference_cpu_s"], rep["times_cpu_s"])), c.gate)
            out["eager_s"] = _median(rep["reference_cpu_s"]) / k
            out["compile_s"] = out["eager_s"] / est.speedup if est.speedup else _median(rep["times_cpu_s"]) / k
        else:
            out["message"] = "torch.compile baseline failed: " + str(
                (rep or {}).get("message") or (res.tests[0].message if res.tests else res.message))[-1500:]
        if res.verdict is not Verdict.SANDBOX_ERROR:
            atomic_write_json(path, out)
        return {**out, "cached": False}

    # ------------------------------------------------------------------ score
    def score(self, problem: KernelProblem, candidate_source: str, candidate: str = "candidate") -> KernelScore:
        return self.score_many(problem, [(candidate, candidate_source)])[0]

    def score_many(self, problem: KernelProblem, candidates: list[tuple[str, str]]) -> list[KernelScore]:
        """Score several candidates of one problem in one sandboxed execution: the eager reference
        first, then each candidate, every test from a clean state, all on the same secret inputs
        (e.g. a GRPO group). A speedup flagged implausible is measured once more on its own."""
        t0 = time.monotonic()
        c = self.config
        scores, todo = [], []
        for name, source in candidates:
            ks = KernelScore(problem=problem.name, candidate=name, verdict="format_error", correct=False,
                             level=problem.level, device=c.device, threads=c.threads)
            rep = static.analyze(source, problem.source, c.allow_reference_ops)
            ks.flags, ks.message = list(rep.flags), rep.error
            scores.append(ks)
            if rep.defines_model_new:
                todo.append((ks, source))
        if todo:
            try:
                scale, scale_info = self.scale_for(problem)
            except ScaleError as e:
                for ks, _ in todo:  # the reference's own calibration, before any candidate code
                    ks.verdict, ks.message = "baseline_error", str(e)
                    ks.flags.append(REFERENCE_FAILED)
                todo = []
        if todo:
            compile_ratio, base = None, {}
            if c.compile_baseline:
                base = self.baselines(problem, scale)
                if base.get("eager_s") and base.get("compile_s"):
                    compile_ratio = base["compile_s"] / base["eager_s"]
            for ks, _ in todo:
                ks.scale, ks.sizes, ks.baseline = scale, problem.scaled_sizes(scale), base
                ks.flags.append(f"scale:{scale_info['mode']}")
            self._measure(problem, scale, compile_ratio, todo)
            for ks, source in todo:
                if ks.verdict == "correct" and "implausible" in ks.flags:
                    first = ks.speedup_eager
                    ks.flags = [f for f in ks.flags if f not in ("implausible", "capped", "below_timer_resolution",
                                                                 "imprecise_timing", "erratic_timing", "unmeasurable",
                                                                 "paired_timing")]
                    self._measure(problem, scale, compile_ratio, [(ks, source)])
                    ks.flags.append("remeasured")
                    ks.message = (ks.message + f" (first measurement {first:.3g}x)").strip()
        return [self._finish(ks, t0) for ks in scores]

    def _measure(self, problem: KernelProblem, scale: float, compile_ratio: float | None,
                 items: list[tuple[KernelScore, str]]) -> None:
        c = self.config
        seed, nonce = secrets.randbits(62), secrets.token_hex(16)
        source = problem.scaled_source(scale)
        res = self._run([self._driver_input(source, "candidate", seed, nonce, candidate=cand, interpret=c.interpret)
                         for _, cand in items])
        for i, (ks, _) in enumerate(items):
            self._judge(ks, res, res.tests[i] if len(res.tests) > i else None, nonce, compile_ratio)

    def _judge(self, ks: KernelScore, res, test, nonce: str, compile_ratio: float | None) -> None:
        c = self.config
        ks.verdict, ks.correct = "baseline_error", False
        if res.verdict is Verdict.SANDBOX_ERROR:
            ks.verdict, ks.message = "sandbox_error", res.message
            return
        cand = parse_report(test.output, nonce) if test else None
        if cand is None:
            # no report: the driver was killed or stopped, which only the candidate can do
            v = test.verdict if test else res.verdict
            ks.verdict = "timeout" if v is Verdict.TIME_LIMIT_EXCEEDED else "runtime_error"
            ks.message = f"the harness did not report ({v}): " + ((test.message if test else res.message) or "")[-1500:]
            return
        status = cand.get("status")
        if status == "baseline_error":  # the reference failed alone, before any candidate code existed
            ks.message = str(cand.get("message", ""))[:4000]
            ks.flags.append(REFERENCE_FAILED)
            return
        # a status the driver does not send: the candidate's run said it (an allowlist of verdicts)
        ks.verdict = {"ok": "correct", "load_error": "load_error", "runtime_error": "runtime_error",
                      "timeout": "timeout", "incorrect": "incorrect"}.get(status, "runtime_error")
        ks.correct = ks.verdict == "correct"
        ks.message = str(cand.get("message", ""))[:4000]
        ks.correctness = cand.get("correctness", [])
        ks.reference_ops = cand.get("reference_ops", {})
        ks.candidate_ops = cand.get("candidate_ops", [])
        ks.candidate_compile_s = cand.get("compile_s", [])
        ks.flags.append(f"cpu:{cand.get('cpu_source', 'unknown')}")
        if any(t.get("varied_sizes") for t in ks.correctness):
            ks.flags.append("shapes:varied")
        if ks.reference_ops and not c.allow_reference_ops:
            main = max(ks.reference_ops, key=ks.reference_ops.get)
            if main in ks.candidate_ops:
                ks.flags.append(f"hack:reference_op:{main}")
        if not ks.correct:
            return
        k = max(1, int(cand.get("calls_per_round", 1)))  # a round's times hold k calls of each model
        ks.times_s, ks.eager_times_s = [t / k for t in cand["times_cpu_s"]], [t / k for t in cand["reference_cpu_s"]]
        ks.trials = len(ks.times_s) * k
        ks.eager_s, ks.runtime_s = _median(ks.eager_times_s), _median(ks.times_s)
        ks.alone_times_s = [t / k for t in cand.get("reference_alone_cpu_s", [])]
        t = judge_timing(ks.eager_times_s, ks.times_s, ks.alone_times_s, c.gate, c.policy)
        ks.speedup_eager, ks.timing = t.speedup, {**t.info, "calls_per_round": k}
        if "paired_timing" in t.flags:  # the medians carried the machine's drift; the rounds' ratios did not
            ks.runtime_s = ks.eager_s / t.speedup
        ks.flags += [f for f in t.flags if f not in ks.flags]
        if t.message:
            ks.message = (ks.message + " " + t.message).strip()
        if compile_ratio is not None and ks.eager_s is not None and ks.speedup_eager is not None:
            ks.compile_s = ks.eager_s * compile_ratio
            # the same judgement against compile: the pessimistic bound carries over as a ratio
            ks.speedup_compile = speedup_ratio(ks.compile_s, ks.eager_s / max(ks.speedup_eager, 1e-12),
                                               c.policy).value

    def _finish(self, ks: KernelScore, t0: float) -> KernelScore:
        ks.flags = list(dict.fromkeys(ks.flags))
        ks.reward = kernel_reward(ks)  # withholds an unmeasurable one (metrics.kernel_outcome), not a hack
        ks.seconds = round(time.monotonic() - t0, 3)
        return ks


class ScaleError(RuntimeError):
    pass


@dataclass
class Timing:
    speedup: float | None
    flags: list
    message: str
    info: dict


def judge_timing(reference: list[float], subject: list[float], alone: list[float],
                 gate: NoiseGate = NoiseGate(), policy: SpeedupPolicy = SpeedupPolicy()) -> Timing:
    """The speedup of interleaved rounds (per round: the reference's CPU, the subject's), gated on
    its precision, and whose fault the noise is.

    The estimate is the one protocol's (``timing_stats.rounds_estimate``, as the probe harness and
    the contest protocol): median(reference) / median(subject), its error combining both medians'
    and at least what the rounds' own ratios show (``timing_stats.medians_rel_se``: on a busy host
    each side's spread can look small by chance while the ratios scatter), its gap to the median
    per-round ratio (``timing_stats.shift``); where those fail the gate, the
    paired estimate (the inverse mean per-round cost ratio, its error t-widened: a busy host's
    drift cancels within a round; flag ``paired_timing``). Within the gate: reported (flag
    ``imprecise_timing`` above sqrt(2) x target). Neither within it (``unmeasurable``):
    - the reference timed *alone* (``alone``: before any candidate code existed in the sandbox) was
      itself above the limit: the machine cannot measure this problem now, which the candidate
      cannot have caused: no speedup, the reward withheld (flag ``unmeasurable``);
    - else the noise appeared only with the candidate beside the reference: its own variability,
      or its doing (background work disturbing the reference, erratic calls): it is scored, at a
      pessimistic bound: the slowest of its estimates, times exp(2 x the medians' error)
      (flag ``erratic_timing``), so that noise can never raise a reward.
    A candidate slower than the reference whatever the noise (``timing_stats.precision``'s
    ``slower_than``) is reported as measured, flagged ``imprecise_timing``: never withheld."""
    b, c = statistics.median(reference), statistics.median(subject)
    pairs = list(zip(reference, subject))
    errs = {"reference": timing_stats.rel_se_of_cost(reference), "subject": timing_stats.rel_se_of_cost(subject),
            "alone": timing_stats.rel_se_of_cost(alone)}
    medians_se = timing_stats.medians_rel_se(pairs)  # at least what the rounds' ratios show
    est = timing_stats.rounds_estimate(pairs, gate)
    paired = est.rule == "paired"
    checked = speedup_ratio(b, b / est.speedup if paired else c, policy)
    decision = timing_stats.precision(est.rel_se, est.gap, gate, len(pairs), checked.value)
    rr = timing_stats.round_ratio_speedup(pairs)
    info = {"rounds": len(pairs), "rule": est.rule, "rel_se": _round(est.rel_se),
            "shift": round(timing_stats.shift(pairs, b, c), 4), "round_ratio_speedup": _round(rr),
            "rel_se_medians": _round(medians_se), **{f"rel_se_{k}": _round(v) for k, v in errs.items()},
            "decision": decision.decision}
    info["estimate"] = _round(checked.value)  # before the gate: what blocked timing would have reported
    flags = list(checked.flags) + (["paired_timing"] if paired else [])
    if decision.decision == "ok":
        return Timing(checked.value, flags, "", info)
    if decision.decision == "imprecise":
        return Timing(checked.value, flags + ["imprecise_timing"], "", info)
    if errs["alone"] is not None and errs["alone"] > gate.max_rel_se:
        info["blame"] = "machine"
        return Timing(None, ["unmeasurable"], f"correct; no speedup: {decision.reason}; the reference alone was as "
                      f"noisy ({100 * errs['alone']:.0f}%): the machine's, the reward is withheld", info)
    info["blame"] = "candidate"
    mean_cost = timing_stats.paired_speedup(pairs).speedup
    slow = max([c] + [b / x for x in (rr, mean_cost) if x])
    bound = math.exp(2 * min(medians_se if medians_se is not None else 0.0, 10.0))
    low = speedup_ratio(b, slow * bound, policy)
    return Timing(low.value, low.flags + ["erratic_timing"],
                  f"timing: {decision.reason}; the reference alone was precise, so the noise is the candidate's: "
                  "scored at a pessimistic bound", info)


def _round(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else round(v, 4)
