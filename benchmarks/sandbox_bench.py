"""Sandbox benchmark.

(a) executions per second of a trivial C++ and Python program through the persistent sandbox
    (one sandbox per submission, a fork per test inside) vs raw subprocess fork/exec, measured
    side by side in one run, as a ratio (target >= 50%);
(b) coefficient of variation of CPU time and of wall time over 5 x ROUNDS runs of a ~35 ms C++
    program (target: within 0.5 points of raw), through the sandbox (cgroup CPU counter: every
    process and thread) and, interleaved in the same run, the same binary run raw (wait4 rusage),
    so the noise of the machine and the noise of the measurement can be told apart; plus a null
    program through the sandbox (the fixed cost a measurement carries, and its spread).

    .venv/bin/python benchmarks/sandbox_bench.py [--tests 200] [--backend auto] [--rounds 6]
    .venv/bin/python benchmarks/sandbox_bench.py --cv-only --rounds 8 --json   # (b) alone, one JSON line
    .venv/bin/python benchmarks/sandbox_bench.py --rate-only --tests 300        # (a) alone
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402

TRIVIAL_CPP = "#include <cstdio>\nint main(){ int a, b; if (scanf(\"%d %d\", &a, &b) == 2) printf(\"%d\\n\", a + b); }"
TRIVIAL_PY = "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n"
WORK_CPP = r"""
#include <cstdio>
#include <cstdint>
int main(){ uint64_t x = 1, s = 0;
  for (int i = 0; i < 30000000; i++) { x = x * 6364136223846793005ULL + 1442695040888963407ULL; s += x >> 60; }
  printf("%llu\n", (unsigned long long)s); }
"""


def raw_rate(argv: list[str], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        subprocess.run(argv, input=b"1 2\n", stdout=subprocess.DEVNULL, check=True)
    return n / (time.perf_counter() - t0)


def sandbox_rate(sb: Sandbox, src: str, lang: str, n: int) -> float:
    sb.run(src, lang, [TestCase("1 2\n", "3")])  # warm the compile cache
    tests = [TestCase("1 2\n", "3")] * n
    t0 = time.perf_counter()
    r = sb.run(src, lang, tests)
    dt = time.perf_counter() - t0
    assert r.ok, r.verdict
    return n / dt


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.mean(xs)


NULL_CPP = "int main(){return 0;}"


def cpu_time_precision(sb: Sandbox, work: Path, rounds: int) -> dict:
    """(b): per round 5 sandbox runs of WORK_CPP, 5 raw runs of the same program (``work``,
    compiled alike) and 5 sandbox runs of a null program, interleaved."""
    limits = Limits(time_s=10)
    box_cpu, box_wall, raw_cpu, null = [], [], [], []
    for _ in range(rounds):
        t = sb.run(WORK_CPP, "cpp", [TestCase()], limits, repeats=5).tests[0]
        box_cpu += t.cpu_times_s
        box_wall += t.wall_times_s
        null += sb.run(NULL_CPP, "cpp", [TestCase()], limits, repeats=5).tests[0].cpu_times_s
        for _ in range(5):
            p = subprocess.Popen([str(work)], stdout=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            raw_cpu.append(ru.ru_utime + ru.ru_stime)
    return {"backend": sb.name, "runs": len(box_cpu), "box_cv_pct": round(100 * cv(box_cpu), 3),
            "raw_cv_pct": round(100 * cv(raw_cpu), 3), "box_wall_cv_pct": round(100 * cv(box_wall), 3),
            "box_median_ms": round(1e3 * statistics.median(box_cpu), 3),
            "raw_median_ms": round(1e3 * statistics.median(raw_cpu), 3),
            "null_median_ms": round(1e3 * statistics.median(null), 3),
            "null_sd_ms": round(1e3 * statistics.stdev(null), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--rounds", type=int, default=6, help="(b): rounds of 5 sandbox + 5 raw + 5 null runs")
    ap.add_argument("--cv-only", action="store_true", help="(b) only")
    ap.add_argument("--rate-only", action="store_true", help="(a) only")
    ap.add_argument("--json", action="store_true", help="(b) as one JSON line")
    args = ap.parse_args()
    with Sandbox(backend=args.backend, calibrate=False) as sb, tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "trivial"
        subprocess.run(["g++", "-O2", "-std=gnu++17", "-x", "c++", "-", "-o", str(exe)], input=TRIVIAL_CPP.encode(),
                       check=True)
        py = Path(d) / "trivial.py"
        py.write_text(TRIVIAL_PY)
        print(f"backend: {sb.name}  tests per measurement: {args.tests}  cpus: {os.cpu_count()}")
        for lang, src, argv in (() if args.cv_only else (("cpp", TRIVIAL_CPP, [str(exe)]),
                                                          ("python3", TRIVIAL_PY, ["/usr/bin/python3", str(py)]))):
            # interleave to share the machine's noise fairly
            raw, box = [], []
            for _ in range(3):
                raw.append(raw_rate(argv, args.tests))
                box.append(sandbox_rate(sb, src, lang, args.tests))
            r, b = statistics.median(raw), statistics.median(box)
            # the fixed cost of a job (sandbox start, runner start, teardown): what a contest
            # submission with a handful of tests mostly pays
            start = statistics.median(1 / sandbox_rate(sb, src, lang, 1) for _ in range(5))
            print(f"(a) {lang:8s} raw subprocess {r:8.1f} exec/s | sandbox {b:8.1f} exec/s | ratio {b / r:6.1%} | "
                  f"a job of 1 test {1e3 * start:.1f} ms")
        if args.rate_only:
            return
        work = Path(d) / "work"
        subprocess.run(["g++", "-O2", "-std=gnu++17", "-x", "c++", "-", "-o", str(work)], input=WORK_CPP.encode(),
                       check=True)
        f = cpu_time_precision(sb, work, args.rounds)
        if args.json:
            print(json.dumps(f))
        else:
            print(f"(b) ~{f['box_median_ms']:.0f} ms C++ program, {f['runs']} runs: sandbox CPU-time CV "
                  f"{f['box_cv_pct']:.2f}% (cgroup, every process) | raw wait4 CPU-time CV {f['raw_cv_pct']:.2f}% | "
                  f"sandbox wall-time CV {f['box_wall_cv_pct']:.2f}% | median CPU sandbox/raw "
                  f"{f['box_median_ms'] / f['raw_median_ms']:.3f} | null program {f['null_median_ms']:.2f} ms, "
                  f"SD {f['null_sd_ms']:.3f} ms")


if __name__ == "__main__":
    main()
