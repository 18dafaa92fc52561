"""Are the deterministic clock's counts equal run to run, per sandbox backend? The honest C++ and
Python programs of tests/sandbox/test_clock.py, ``--jobs`` jobs of 3 runs each under the
``instructions`` clock, on each backend given; prints the distinct counts and their distances in page
faults (one fault is priced FAULT_PAGES x 4096 counted instructions). docs/limitations.md,
"Deterministic clocks".

The host conditions that moved the counts before perfcount read file pages in itself (perfcount.c,
"File pages"), each optional: ``--fresh`` compiles a new binary per job (its pages freshly written,
under writeback), ``--drop-caches`` empties the page cache before every other job (root), and
``--pressure-gb G`` keeps G GiB of anonymous memory being rewritten beside the runs (reclaim scanning).

    nice -n 5 .venv/bin/python benchmarks/clock_repeatability.py --jobs 6 --fresh --drop-caches \
        --pressure-gb 8 bwrap local-unsafe
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "sandbox"))


def _pressure(gib: int) -> None:  # a child: rewrite gib GiB of anonymous memory, page by page, forever
    import numpy as np
    blocks = [np.ones(1 << 27, dtype=np.uint8) for _ in range(gib * 8)]  # 128 MiB each
    while True:
        for b in blocks:
            b[::4096] += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("backends", nargs="+")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--fresh", action="store_true", help="a new binary (and Python source) per job")
    ap.add_argument("--drop-caches", action="store_true", help="drop the page cache before every other job (root)")
    ap.add_argument("--pressure-gb", type=int, default=0, help="GiB of memory rewritten beside the runs")
    a = ap.parse_args()

    import test_clock as t

    from perfalign.sandbox import Job, Sandbox, TestCase
    from perfalign.sandbox import clock as clk

    hog = None
    if a.pressure_gb:
        hog = mp.get_context("spawn").Process(target=_pressure, args=(a.pressure_gb,), daemon=True)
        hog.start()
        time.sleep(10)  # its memory allocated
    fault = clk.FAULT_PAGES * 4096
    programs = {"cpp": (t.HONEST_CPP, t.INPUT, t.ANSWER, "//"), "python3": (t.HONEST_PY, t.PY_INPUT, t.PY_ANSWER, "#")}
    try:
        for backend in a.backends:
            with Sandbox(backend=backend, workers=1, calibrate=False) as sb:
                for lang, (src, inp, ans, comment) in programs.items():
                    counts = []
                    for j in range(a.jobs):
                        if a.drop_caches and j % 2:
                            Path("/proc/sys/vm/drop_caches").write_text("1\n")
                        text = f"{src}\n{comment} job {time.time_ns()}\n" if a.fresh else src
                        r = sb.run_job(Job(text, lang, [TestCase(inp, ans)], t.LIM, repeats=3, clock="instructions"))
                        assert r.verdict.value == "OK", r.message
                        counts += r.tests[0].instructions_runs
                    base = min(counts)
                    print(json.dumps({"backend": backend, "language": lang, "runs": len(counts),
                                      "distinct": len(set(counts)), "count": base,
                                      "faults_apart": sorted({(c - base) / fault for c in counts}),
                                      "fresh": a.fresh, "drop_caches": a.drop_caches, "pressure_gb": a.pressure_gb,
                                      "loadavg": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    finally:
        if hog is not None:
            hog.kill()


if __name__ == "__main__":
    main()
