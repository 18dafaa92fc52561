"""The slow-tail rule's cost on the bundled sample: the same build at cap 1 (a program past its
time limit is a reject) and at the default cap, side by side in one run, alternating, each into
a fresh folder, after one untimed build that fills the compile cache: statuses, slow-tail counts,
test executions and the build's wall time.
A sample whose correct programs all run within their limits does the same work under both.

    .venv/bin/python benchmarks/slow_tail_bench.py [--limit-problems N] [--max-tests N] [--repeats 1] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfalign.perfdata.perf import BuildSettings  # noqa: E402
from perfalign.perfdata.perf_build import build  # noqa: E402

SAMPLE = ROOT / "data" / "codecontests_sample" / "data"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit-problems", type=int, default=None)
    ap.add_argument("--max-tests", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    arms = {"cap 1": 1.0, f"cap {BuildSettings.limit_cap:g} (default)": BuildSettings.limit_cap}
    walls: dict[str, list[float]] = {k: [] for k in arms}
    last = {}

    def run(cap: float):
        with tempfile.TemporaryDirectory() as d:
            return build(str(SAMPLE), Path(d) / "out", BuildSettings(repeats=a.repeats, max_tests=a.max_tests,
                                                                     limit_cap=cap),
                         limit_problems=a.limit_problems, workers=a.workers)

    run(1.0)  # warm-up: compiles every program once (the cache is keyed by source, not by limits)
    for _ in range(a.rounds):
        for name, cap in arms.items():
            s = run(cap)
            walls[name].append(s.wall_seconds)
            last[name] = {"status": s.status, "slow_tail": s.slow_tail, "test_executions": s.test_executions}
    for name in arms:
        print(json.dumps({"arm": name, **last[name], "wall_s": walls[name],
                          "median_wall_s": statistics.median(walls[name])}))
    a_, b_ = (statistics.median(walls[n]) for n in arms)
    print(f"wall time, default cap / cap 1: {b_ / a_:.3f} (medians of {a.rounds} alternating builds)")


if __name__ == "__main__":
    main()
