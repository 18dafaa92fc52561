"""Public data types of the sandbox: languages, limits, verdicts and results.

Everything that runs code in perfalign (CodeContests-Perf, synthetic-pair verification,
RL rewards, evaluation) speaks these types; they serialize to the JSON of the CLI contract.
"""
from __future__ import annotations

import dataclasses
import enum
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from perfalign.common.languages import Language  # noqa: F401  (re-exported: sandbox.types.Language)
from perfalign.common.plausibility import repeats_as_set

from .checker import DEFAULT_TOLERANCE
from .clock import DEFAULT_CLOCK, check_clock


class Verdict(str, enum.Enum):
    OK = "OK"
    WRONG_ANSWER = "WRONG_ANSWER"
    TIME_LIMIT_EXCEEDED = "TIME_LIMIT_EXCEEDED"
    MEMORY_LIMIT_EXCEEDED = "MEMORY_LIMIT_EXCEEDED"
    OUTPUT_LIMIT_EXCEEDED = "OUTPUT_LIMIT_EXCEEDED"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    UNSUPPORTED_LANGUAGE = "UNSUPPORTED_LANGUAGE"
    # An infrastructure fault (not the program's): callers may retry it.
    SANDBOX_ERROR = "SANDBOX_ERROR"

    def __str__(self) -> str:  # so f-strings print "OK", not "Verdict.OK"
        return self.value

    @property
    def retryable(self) -> bool:
        return self is Verdict.SANDBOX_ERROR


@dataclass(frozen=True)
class Limits:
    """Per-test resource limits.

    ``time_s`` is a CPU-time limit over every process and thread of the program. The wall clock
    is only a guard (``wall_guard_factor * time_s + wall_guard_s``) against programs that sleep
    or block, generous so a loaded machine does not turn correct submissions into TLE.
    """

    time_s: float = 2.0
    memory_mb: int = 256
    output_mb: int = 64
    processes: int = 64
    # Limits for the compile step (compilers are large: own, looser limits).
    compile_time_s: float = 60.0
    compile_memory_mb: int = 2048
    wall_guard_factor: float = 3.0
    wall_guard_s: float = 1.0

    @property
    def wall_guard(self) -> float:
        return self.wall_guard_factor * self.time_s + self.wall_guard_s


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest test class
    input: str = ""
    # None: no output check (the test only measures / checks it runs).
    expected: str | None = None


@dataclass
class CompileInfo:
    ok: bool
    seconds: float = 0.0
    message: str = ""
    cached: bool = False


@dataclass
class TestResult:
    verdict: Verdict
    # the repeats judged as a set (common.plausibility.repeats_as_set): their median, or the slowest
    # when one repeat was far faster than another (flag "fast_repeat"); every repeat is kept below
    cpu_time_s: float | None = None   # of cpu_times_s (user+sys of the program itself)
    wall_time_s: float | None = None  # of wall_times_s
    max_rss_kb: int | None = None     # max over repeats
    cpu_times_s: list[float] = field(default_factory=list)
    wall_times_s: list[float] = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    message: str = ""
    output: str | None = None  # the program's stdout (first repeat), when asked for
    flags: list[str] = field(default_factory=list)  # "fast_repeat"
    # A deterministic clock's values (Job.clock; sandbox/clock.py), judged as a set like the CPU
    # times; every repeat kept. None / empty under the cpu clock.
    instructions: int | None = None
    cycles: float | None = None
    instructions_runs: list[int] = field(default_factory=list)
    cycles_runs: list[float] = field(default_factory=list)
    # cycles only: the simulated cache misses of the first counted run (L1 instruction + data;
    # last level), the inputs of the cycles model (clock.cycles) and of its weight fit
    l1_misses: int | None = None
    ll_misses: int | None = None
    # a deterministic clock only: the same build run natively in the same job, after the counted
    # runs (every repeat's CPU time; the answer checked too): what the count must not contradict
    native_cpu_times_s: list[float] = field(default_factory=list)

    @classmethod
    def from_repeats(cls, verdict: Verdict, cpu: list[float], wall: list[float], rss: list[int],
                     instructions: Sequence[int] = (), cycles: Sequence[float] = (), **kw: Any) -> "TestResult":
        # judged on the CPU times (the label's clock: wall times also move with the host's load);
        # a flagged set's wall time is its slowest too
        cpu_s, flags = repeats_as_set(cpu)
        wall_s = (max(wall) if flags else statistics.median(wall)) if wall else None
        ins, ins_flags = repeats_as_set([float(x) for x in instructions]) if instructions else (None, [])
        cyc, cyc_flags = repeats_as_set(list(cycles)) if cycles else (None, [])
        flags = sorted(set(flags) | {f"{f}:instructions" for f in ins_flags} | {f"{f}:cycles" for f in cyc_flags})
        return cls(
            verdict=verdict,
            cpu_time_s=cpu_s,
            wall_time_s=wall_s,
            max_rss_kb=max(rss) if rss else None,
            cpu_times_s=list(cpu),
            wall_times_s=list(wall),
            flags=flags,
            instructions=int(ins) if ins is not None else None,
            cycles=cyc,
            instructions_runs=list(instructions),
            cycles_runs=list(cycles),
            **kw,
        )


@dataclass
class RunResult:
    verdict: Verdict
    backend: str
    language: Language
    isolated: bool
    compile: CompileInfo
    tests: list[TestResult] = field(default_factory=list)
    # CPU time of a fixed reference program on this host/backend (normalization across machines).
    calibration: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    # How it was measured and anything a consumer should know: "cpu:cgroup" (every process and
    # thread) or "cpu:rusage" (reaped processes only), "cpus:N", "cpus_not_enforced", "remeasured"...
    flags: list[str] = field(default_factory=list)
    # The judge environment that measured it: toolchain version, Python 3 library versions,
    # the Python 2 root (sandbox.environments.describe); serialized by to_dict.
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.OK

    @property
    def clock(self) -> str:
        """The clock that measured it ("clock:NAME" flag; cpu when none says otherwise)."""
        return next((f.split(":", 1)[1] for f in self.flags if f.startswith("clock:")), "cpu")

    @property
    def mean_cpu_time_s(self) -> float | None:
        """Mean over tests of the per-test median CPU time (the paper's runtime label)."""
        vals = [t.cpu_time_s for t in self.tests if t.cpu_time_s is not None]
        return sum(vals) / len(vals) if vals else None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["verdict"] = self.verdict.value
        d["language"] = self.language.value
        for t in d["tests"]:
            t["verdict"] = t["verdict"].value if isinstance(t["verdict"], Verdict) else t["verdict"]
        if not self.isolated:
            d["warning"] = "not isolated: ran with the local-unsafe backend"
        return d


def overall_verdict(tests: list[TestResult]) -> Verdict:
    """The first non-OK test's verdict, OK if all passed."""
    return next((t.verdict for t in tests if t.verdict is not Verdict.OK), Verdict.OK)


@dataclass
class Job:
    source: str
    language: Language | str | int
    tests: Sequence[TestCase] = ()
    limits: Limits = field(default_factory=Limits)
    repeats: int = 1
    keep_output: bool = False
    stop_on_failure: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    # C++ only: flags appended to g++ (e.g. ("-fopenmp",) for OpenMP kernels); part of the cache key.
    compile_flags: tuple[str, ...] = ()
    # Extra environment for the program (e.g. {"OMP_NUM_THREADS": "2"}); nothing else of ours leaks in.
    env: dict[str, str] = field(default_factory=dict)
    # C++ only: more translation units (file name -> source), each compiled on its own with the
    # same flags and linked with ``source``; headers (.h/.hpp) are only made includable.
    extra_sources: dict[str, str] = field(default_factory=dict)
    # C++ only: extra source name -> the functions it may define for the other units (by name, at
    # global scope); every other global definition of that unit stays private to it (renamed
    # before the link: it cannot replace printf, operator new... for the trusted units).
    exports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Confine every run to this many CPUs (a cpuset); None: all of them.
    cpus: int | None = None
    # How the program is built and launched: "default", or "mpi" / "mpi:N" (Open MPI, N ranks);
    # for python3, "torch": the host's torch site-packages read-only on the program's PYTHONPATH.
    toolchain: str = "default"
    # What measures it (sandbox/clock.py): "cpu" (CPU time), or the deterministic "instructions"
    # (valgrind's count) / "cycles" (instructions + weighted cache misses); where one does not
    # apply (Java's JIT, OpenMP, MPI) the run falls back to cpu with a "clock_fallback:WHY" flag.
    clock: str = DEFAULT_CLOCK

    def __post_init__(self) -> None:
        check_clock(self.clock)
