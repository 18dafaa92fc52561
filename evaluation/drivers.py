"""The single-TU C++ driver harness of the bundled ParEval-style and PolyBench-style samples
(data/pareval_sample, data/polybench_sample); the suites' checkouts use the probe harness (measure/).

A task ships a *driver* (``Context``, ``init``, ``reset``, ``compute``, ``validate``) and a
*baseline* implementation of the function under test. ``DriverSpec.source`` assembles one
translation unit:

    prelude (headers, helpers) | task preamble (types) | baseline renamed perfalign_reference_<fn>
    | candidate code (defines <fn>) | driver | main

``main`` builds the inputs once (``init`` also computes the expected result with the reference),
runs the candidate once and validates it, then times ``repeats`` further calls (``reset`` before
each, untimed) with both a wall clock and the process CPU clock, and prints one result line
tagged with a per-evaluation nonce read from stdin (so a program cannot print a fake result by
accident). Timing inside the program measures the function, not process start-up or input
generation; the baseline is timed by the very same driver (ParEval does the same).
"""
from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from perfalign.measure.probe import normalize_candidate
from perfalign.sandbox import Job, Limits, RunResult, TestCase, Verdict

from .sandbox_jobs import Measurement

RESULT_TAG = "PERFALIGN"

_PRELUDE = r"""#include <bits/stdc++.h>
#include <time.h>
#include <sys/resource.h>
%(omp)s
static inline double perfalign_wall_now() {
    timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
// Process CPU time (all threads) from getrusage: exact to 1 us. CLOCK_PROCESS_CPUTIME_ID is
// tick-sampled (4 ms steps) once RLIMIT_CPU is set, as it is in the sandbox.
static inline double perfalign_cpu_now() {
    rusage u; getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
// The driver calls the function under test through an opaque pointer: it is compiled as a
// standalone function (not inlined into the driver), the same way for baseline and candidate.
template <class F> static inline F* perfalign_opaque(F* f) {
    asm volatile("" : "+r"(f));
    return f;
}
static inline uint64_t perfalign_next(uint64_t& s) {  // splitmix64: deterministic inputs
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL; z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline double perfalign_uniform(uint64_t& s, double lo, double hi) {
    return lo + (hi - lo) * (double)(perfalign_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
static void perfalign_fill(std::vector<double>& v, double lo, double hi, uint64_t seed) {
    for (auto& x : v) x = perfalign_uniform(seed, lo, hi);
}
static bool perfalign_close(double a, double b, double rtol = 1e-6, double atol = 1e-9) {
    return std::isfinite(a) && std::fabs(a - b) <= atol + rtol * std::fabs(b);
}
static bool perfalign_all_close(const double* a, const double* b, size_t n, double rtol = 1e-6, double atol = 1e-9) {
    for (size_t i = 0; i < n; ++i) if (!perfalign_close(a[i], b[i], rtol, atol)) return false;
    return true;
}
static bool perfalign_all_close(const std::vector<double>& a, const std::vector<double>& b, double rtol = 1e-6,
                                double atol = 1e-9) {
    return a.size() == b.size() && perfalign_all_close(a.data(), b.data(), a.size(), rtol, atol);
}
"""

_MAIN = r"""
int main() {
    unsigned long long perfalign_nonce = 0;
    int perfalign_repeats = 1;
    if (std::scanf("%llu %d", &perfalign_nonce, &perfalign_repeats) != 2) return 3;
    Context* perfalign_ctx = init();
    reset(perfalign_ctx);
    compute(perfalign_ctx);
    asm volatile("" : : "r"(perfalign_ctx) : "memory");
    const bool perfalign_valid = validate(perfalign_ctx);
    std::vector<double> perfalign_wall, perfalign_cpu;
    for (int r = 0; perfalign_valid && r < perfalign_repeats; ++r) {
        reset(perfalign_ctx);
        // the barriers keep the compiler from moving or dropping work across the clock reads
        asm volatile("" : : "r"(perfalign_ctx) : "memory");
        const double c0 = perfalign_cpu_now(), w0 = perfalign_wall_now();
        compute(perfalign_ctx);
        asm volatile("" : : "r"(perfalign_ctx) : "memory");
        const double w1 = perfalign_wall_now(), c1 = perfalign_cpu_now();
        perfalign_wall.push_back(w1 - w0);
        perfalign_cpu.push_back(c1 - c0);
    }
    std::fflush(stdout);
    std::printf("\nPERFALIGN %llu %d", perfalign_nonce, perfalign_valid ? 1 : 0);
    for (size_t i = 0; i < perfalign_wall.size(); ++i) std::printf(" %.9f %.9f", perfalign_wall[i], perfalign_cpu[i]);
    std::printf("\n");
    return 0;
}
"""


@dataclass
class DriverSpec:
    """Everything needed to build, run and read one driver task."""

    task_id: str
    function: str
    signature: str           # e.g. "double sumOfMinimumElements(std::vector<double> const& x, ...)"
    args: str                # the parameter names in call order, e.g. "x, y"
    baseline: str            # baseline implementation (defines ``function``): the speedup reference
    driver: str              # Context / init / reset / compute / validate
    preamble: str = ""       # types shared by prompt, reference and candidate
    openmp: bool = False
    threads: int = 1
    repeats: int = 3
    timing: str = "cpu"      # "cpu" (serial: the stable signal) or "wall" (threads: CPU time sums them)
    limits: Limits = field(default_factory=lambda: Limits(time_s=20.0, memory_mb=1024))
    nonce: int = 0
    inout: dict[str, str] = field(default_factory=dict)  # in-out array -> element count (slow variant)
    only_language = "cpp"    # the drivers are C++: a sample in another language is WRONG_LANGUAGE
    self_timed = True        # times its calls itself (CPU seconds) under every sandbox clock
    baseline_source = "measured"

    def __post_init__(self) -> None:
        if self.timing not in ("cpu", "wall"):
            raise ValueError(f"{self.task_id}: timing must be 'cpu' or 'wall', got {self.timing!r}")
        if not re.search(rf"\b{re.escape(self.function)}\s*\(", self.baseline):
            raise ValueError(f"{self.task_id}: the baseline does not define {self.function}")

    @property
    def parallel(self) -> bool:
        return self.openmp

    def baseline_s(self, language: str) -> float | None:
        return None  # C++ only (only_language): every sample's baseline is the measured one

    def source(self, candidate: str) -> str:
        """One translation unit: harness + reference + candidate + driver + main."""
        fn = self.function
        prelude = _PRELUDE % {"omp": "#include <omp.h>" if self.openmp else ""}
        return "".join([
            prelude, "\n", self.preamble, "\n",
            f"#define {fn} perfalign_reference_{fn}\n", self.baseline, f"\n#undef {fn}\n",
            '#line 1 "candidate.cpp"\n', normalize_candidate(candidate, fn, self.signature), "\n",
            f"#define {fn} (*perfalign_opaque(&{fn}))\n",
            '#line 1 "driver.cpp"\n', self.driver, "\n", _MAIN,
        ])

    def job(self, candidate: str, language: str = "cpp") -> Job:
        """The sandbox job of one candidate (drivers are C++; ``language`` is for the common interface)."""
        return Job(self.source(candidate), "cpp", [TestCase(f"{self.nonce} {self.repeats}\n", None)], self.limits,
                   repeats=1, keep_output=True,
                   compile_flags=("-fopenmp",) if self.openmp else (),
                   env={"OMP_NUM_THREADS": str(self.threads)} if self.openmp else {})

    def measure(self, result: RunResult) -> Measurement:
        """Read the driver's result line; the runtime is the median of the timed repeats."""
        if result.verdict is not Verdict.OK:
            msg = result.compile.message if result.verdict is Verdict.COMPILE_ERROR else result.message
            return Measurement(False, None, result.verdict.value, (msg or "")[:2000])
        out = (result.tests[0].output or "") if result.tests else ""
        line = None
        for candidate_line in out.splitlines():
            if candidate_line.startswith(f"{RESULT_TAG} {self.nonce} "):
                line = candidate_line
        if line is None:
            return Measurement(False, None, "NO_RESULT", "the driver printed no result line")
        fields = line.split()[2:]
        try:
            valid, values = fields[0] == "1", [float(v) for v in fields[1:]]
        except (IndexError, ValueError):
            return Measurement(False, None, "NO_RESULT", f"unreadable result line {line[:200]!r}")
        if not valid:
            return Measurement(False, None, Verdict.WRONG_ANSWER.value, "result differs from the reference")
        times = values[0::2] if self.timing == "wall" else values[1::2]
        if len(times) != self.repeats:
            return Measurement(False, None, "NO_RESULT", f"expected {self.repeats} timings, got {len(times)}")
        return Measurement(True, statistics.median(times), Verdict.OK.value, "", times)

    def slow_variant(self) -> str:
        """The baseline doing its work exactly twice (a known 2x slower, correct program): the
        first call runs on copies of the in-out arrays; compiler barriers keep both calls."""
        fn, ret = self.function, self.signature.split(self.function)[0].strip()
        once = f"perfalign_once_{fn}"
        call = f"(*perfalign_opaque(&{once}))"  # called like the baseline run calls it
        first_args = self.args
        copies = []
        for name, count in self.inout.items():
            copies.append(f"    std::vector<std::remove_pointer_t<decltype({name})>> perfalign_copy_{name}"
                          f"({name}, {name} + ({count}));")
            first_args = re.sub(rf"\b{re.escape(name)}\b", f"perfalign_copy_{name}.data()", first_args)
        first = f"{call}({first_args});" if ret == "void" else \
            f"volatile auto perfalign_sink = {call}({first_args}); (void)perfalign_sink;"
        body = "\n".join([*copies, f"    {first}", '    asm volatile("" : : : "memory");',
                          f"    return {call}({self.args});"])
        # noinline: each call runs the baseline's own standalone code, as the baseline run does
        declaration = "__attribute__((noinline)) " + self.signature.replace(fn, once, 1) + ";"
        return (f"{declaration}\n#define {fn} {once}\n{self.baseline}\n#undef {fn}\n\n"
                f"{self.signature} {{\n{body}\n}}\n")


def read_task_dir(d: Path, required: tuple[str, ...], files: tuple[str, ...]) -> dict:
    """``task.json`` of a bundled task directory, checked for its fields and companion files."""
    try:
        meta = json.loads((d / "task.json").read_text())
    except ValueError as e:
        raise ValueError(f"{d / 'task.json'}: not valid JSON ({e})") from None
    missing = [k for k in required if k not in meta]
    if missing:
        raise ValueError(f"{d / 'task.json'}: missing fields {missing}")
    for f in files:
        if not (d / f).is_file():
            raise FileNotFoundError(f"task {d.name}: missing {f}")
    return meta
