"""The sandbox's CPU-time precision against a raw run (issue 22, "the precision of a raw run").

40 runs of a ~40 ms C++ program through the sandbox (cgroup CPU counter) and, interleaved in
the same run, 40 raw runs of the same program (wait4 rusage), plus 40 runs of a null program
through the sandbox (the fixed cost a measurement carries and its spread). Prints one JSON line:
CV of each, medians, the null program's median and SD.

    .venv/bin/python benchmarks/sandbox_cv_bench.py [--label new] [--rounds 8]

Comparing two runners (docs/sandbox.md): run it once per checkout, alternating, on the same
idle machine; the figures in docs/measurements/sandbox-cv-2026-11-26/ came from this script on
an idle 16-core host, the runner before (5e0a047) and after (5b22536) the parked-child start.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_bench import WORK_CPP, cv  # noqa: E402

from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402

NULL_CPP = "int main(){return 0;}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--rounds", type=int, default=8, help="rounds of 5 sandbox + 5 raw + 5 null runs")
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    limits = Limits(time_s=10)
    with Sandbox(backend=args.backend, calibrate=False) as sb, tempfile.TemporaryDirectory() as d:
        work = Path(d) / "work"
        subprocess.run(["g++", "-O2", "-std=gnu++17", "-x", "c++", "-", "-o", str(work)], input=WORK_CPP.encode(),
                       check=True)
        box, raw, null = [], [], []
        for _ in range(args.rounds):
            box += sb.run(WORK_CPP, "cpp", [TestCase()], limits, repeats=5).tests[0].cpu_times_s
            null += sb.run(NULL_CPP, "cpp", [TestCase()], limits, repeats=5).tests[0].cpu_times_s
            for _ in range(5):
                p = subprocess.Popen([str(work)], stdout=subprocess.DEVNULL)
                _, _, ru = os.wait4(p.pid, 0)
                raw.append(ru.ru_utime + ru.ru_stime)
        print(json.dumps({"label": args.label, "backend": sb.name, "box_cv_pct": round(100 * cv(box), 3),
                          "raw_cv_pct": round(100 * cv(raw), 3),
                          "box_median_ms": round(1e3 * statistics.median(box), 3),
                          "raw_median_ms": round(1e3 * statistics.median(raw), 3),
                          "null_median_ms": round(1e3 * statistics.median(null), 3),
                          "null_sd_ms": round(1e3 * statistics.stdev(null), 3)}))


if __name__ == "__main__":
    main()
