"""Sandbox benchmark (issue: sandbox §7).

(a) executions per second of a trivial C++ and Python program through the persistent sandbox
    (one sandbox per submission, a fork per test inside) vs raw subprocess fork/exec, measured
    side by side in one run, as a ratio (target >= 50%);
(b) coefficient of variation of CPU time and of wall time over 30 runs of a ~35 ms C++ program
    (target CPU-time CV <= 2%), through the sandbox (cgroup CPU counter: every process and
    thread) and, interleaved in the same run, the same binary run raw (wait4 rusage) — so the
    noise of the machine and the noise of the measurement can be told apart.

    .venv/bin/python benchmarks/sandbox_bench.py [--tests 200] [--backend auto]
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    sb = Sandbox(backend=args.backend, calibrate=False)
    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "trivial"
        subprocess.run(["g++", "-O2", "-std=gnu++17", "-x", "c++", "-", "-o", str(exe)], input=TRIVIAL_CPP.encode(),
                       check=True)
        py = Path(d) / "trivial.py"
        py.write_text(TRIVIAL_PY)
        print(f"backend: {sb.name}  tests per measurement: {args.tests}  cpus: {os.cpu_count()}")
        for lang, src, argv in (("cpp", TRIVIAL_CPP, [str(exe)]),
                                ("python3", TRIVIAL_PY, ["/usr/bin/python3", str(py)])):
            # interleave to share the machine's noise fairly
            raw, box = [], []
            for _ in range(3):
                raw.append(raw_rate(argv, args.tests))
                box.append(sandbox_rate(sb, src, lang, args.tests))
            r, b = statistics.median(raw), statistics.median(box)
            print(f"(a) {lang:8s} raw subprocess {r:8.1f} exec/s | sandbox {b:8.1f} exec/s | ratio {b / r:6.1%}")
        work = Path(d) / "work"
        subprocess.run(["g++", "-O2", "-std=gnu++17", "-x", "c++", "-", "-o", str(work)], input=WORK_CPP.encode(),
                       check=True)
        box_cpu, box_wall, raw_cpu = [], [], []
        for _ in range(6):  # 6 x 5 runs each, interleaved
            t = sb.run(WORK_CPP, "cpp", [TestCase()], Limits(time_s=10), repeats=5).tests[0]
            box_cpu += t.cpu_times_s
            box_wall += t.wall_times_s
            for _ in range(5):
                p = subprocess.Popen([str(work)], stdout=subprocess.DEVNULL)
                _, _, ru = os.wait4(p.pid, 0)
                raw_cpu.append(ru.ru_utime + ru.ru_stime)
        print(f"(b) ~{statistics.median(box_cpu) * 1000:.0f} ms C++ program, 30 runs: sandbox CPU-time CV "
              f"{cv(box_cpu):.2%} (cgroup, every process) | raw wait4 CPU-time CV {cv(raw_cpu):.2%} | "
              f"sandbox wall-time CV {cv(box_wall):.2%} | median CPU sandbox/raw "
              f"{statistics.median(box_cpu) / statistics.median(raw_cpu):.3f}")
    sb.close()


if __name__ == "__main__":
    main()
