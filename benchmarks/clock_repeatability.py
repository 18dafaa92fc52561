"""Are the deterministic clock's counts equal run to run, per sandbox backend? The honest C++
program of tests/sandbox/test_clock.py, ``--jobs`` jobs of 3 runs each under the ``instructions``
clock, on each backend given; prints the distinct counts and their distances in page faults (one
fault is priced FAULT_PAGES x 4096 counted instructions). docs/limitations.md, "Deterministic clocks".

    nice -n 5 .venv/bin/python benchmarks/clock_repeatability.py --jobs 4 bwrap local-unsafe
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "sandbox"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("backends", nargs="+")
    ap.add_argument("--jobs", type=int, default=4)
    a = ap.parse_args()

    import test_clock as t

    from perfalign.sandbox import Job, Sandbox, TestCase
    from perfalign.sandbox import clock as clk

    fault = clk.FAULT_PAGES * 4096
    for backend in a.backends:
        with Sandbox(backend=backend, workers=1, calibrate=False) as sb:
            counts = []
            for _ in range(a.jobs):
                r = sb.run_job(Job(t.HONEST_CPP, "cpp", [TestCase(t.INPUT, t.ANSWER)], t.LIM, repeats=3,
                                   clock="instructions"))
                counts += r.tests[0].instructions_runs
        base = min(counts)
        print(json.dumps({"backend": backend, "runs": len(counts), "distinct": len(set(counts)),
                          "faults_apart": sorted({(c - base) / fault for c in counts}),
                          "loadavg": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
