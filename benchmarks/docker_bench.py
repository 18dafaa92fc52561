"""Docker backend throughput beside bwrap's, in one run, on a private engine (tests/fixtures/docker_engine.py).

(a) executions per second of a trivial C++ and Python program, N tests in one submission
    (one sandbox per submission, the runner starts each test): docker vs bwrap, interleaved;
(b) cost per submission of one test (sandbox start-up dominates: a fresh container per
    submission for docker, a fresh bwrap for bwrap), ms;
(c) CPU-time CV over 30 runs of the ~35 ms C++ program, both backends (cgroup CPU counters).

    .venv/bin/python benchmarks/docker_bench.py [--tests 200] [--submissions 20]

``compare()`` is the function benchmarks/sandbox_bench.py can call to print the same lines.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fixtures"), str(ROOT / "benchmarks")]

from sandbox_bench import TRIVIAL_CPP, TRIVIAL_PY, WORK_CPP, cv, sandbox_rate  # noqa: E402

from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402


def per_submission_ms(sb: Sandbox, src: str, lang: str, n: int) -> float:
    sb.run(src, lang, [TestCase("1 2\n", "3")])  # compile cache warm
    t0 = time.perf_counter()
    for i in range(n):
        assert sb.run(src, lang, [TestCase(f"{i} 2\n", str(i + 2))]).ok
    return (time.perf_counter() - t0) / n * 1000


def compare(tests: int = 200, submissions: int = 20) -> dict:
    """Start a private engine, measure both backends side by side, print and return the figures."""
    from docker_engine import start_engine

    engine = start_engine()
    out: dict = {}
    try:
        with Sandbox(backend="bwrap", calibrate=False) as bw, Sandbox(backend="docker", calibrate=False) as dk:
            print(f"docker vs bwrap: {tests} tests per submission, {submissions} one-test submissions, "
                  f"engine {engine.host}")
            for lang, src in (("cpp", TRIVIAL_CPP), ("python3", TRIVIAL_PY)):
                rates = {"bwrap": [], "docker": []}
                for _ in range(3):  # interleaved: both share the machine's noise
                    rates["bwrap"].append(sandbox_rate(bw, src, lang, tests))
                    rates["docker"].append(sandbox_rate(dk, src, lang, tests))
                b, d = statistics.median(rates["bwrap"]), statistics.median(rates["docker"])
                sub_b = per_submission_ms(bw, src, lang, submissions)
                sub_d = per_submission_ms(dk, src, lang, submissions)
                out[lang] = {"bwrap_exec_s": b, "docker_exec_s": d, "bwrap_submission_ms": sub_b,
                             "docker_submission_ms": sub_d}
                print(f"(a) {lang:8s} bwrap {b:8.1f} exec/s | docker {d:8.1f} exec/s | docker/bwrap {d / b:6.1%}")
                print(f"(b) {lang:8s} one-test submission: bwrap {sub_b:7.1f} ms | docker {sub_d:7.1f} ms")
            cpu = {"bwrap": [], "docker": []}
            for _ in range(6):
                for name, sb in (("bwrap", bw), ("docker", dk)):
                    res = sb.run(WORK_CPP, "cpp", [TestCase()], Limits(time_s=10), repeats=5)
                    cpu[name] += res.tests[0].cpu_times_s
            out["cpu_cv"] = {k: cv(v) for k, v in cpu.items()}
            print(f"(c) ~{statistics.median(cpu['docker']) * 1000:.0f} ms C++ program, 30 runs: CPU-time CV "
                  f"bwrap {cv(cpu['bwrap']):.2%} | docker {cv(cpu['docker']):.2%} | median CPU docker/bwrap "
                  f"{statistics.median(cpu['docker']) / statistics.median(cpu['bwrap']):.3f}")
    finally:
        engine.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--submissions", type=int, default=20)
    args = ap.parse_args()
    compare(args.tests, args.submissions)


if __name__ == "__main__":
    main()
