"""Which HumanEval problems the performance task can score here: each problem's performance tests
drawn as a scoring session draws them (`humaneval.perf_tests`: the official calls recorded, the
scale calibrated on the canonical solution, the canonical run on the drawn inputs), ``--sessions``
times with fresh secret draws. A problem whose canonical cannot run on a draw (`ProblemUnusable`)
scores `NO_RESULT` for every candidate in that session. Prints one JSON line per problem, then the
unusable ones per split.

    nice -n 10 .venv/bin/python benchmarks/humaneval_usable.py --sessions 2
"""
from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=2, help="draws per problem")
    ap.add_argument("--split", choices=("heldout", "train", "all"), default="all")
    a = ap.parse_args()

    from perfalign.evaluation.tasks import humaneval as he
    from perfalign.measure.harness import ProblemUnusable
    from perfalign.sandbox import Sandbox

    ids = he.split("heldout") + he.split("train") if a.split == "all" else he.split(a.split)
    print(json.dumps({"problems": len(ids), "sessions": a.sessions, "loadavg_start": os.getloadavg()}), flush=True)
    unusable: dict[str, list[str]] = {"heldout": [], "train": []}
    t0 = time.time()
    with Sandbox(backend="auto", workers=2) as sb:
        for pid in ids:
            p, runs = he.problem(pid), []
            for _ in range(a.sessions):
                try:
                    _, info = he.perf_tests(sb, p)
                    runs.append({k: info[k] for k in ("scale", "perf_calls", "function_share")})
                except ProblemUnusable as e:
                    runs.append({"unusable": str(e)})
                except Exception as e:  # noqa: BLE001  a record, not the end of the sweep
                    runs.append({"unusable": f"{type(e).__name__}: {e}"})
            bad = sum("unusable" in r for r in runs)
            if bad:
                unusable["heldout" if p.heldout else "train"].append(f"{pid} ({bad}/{a.sessions})")
            print(json.dumps({"problem": pid, "split": "heldout" if p.heldout else "train", "runs": runs}), flush=True)
    print(json.dumps({"unusable": unusable, "counts": {k: len(v) for k, v in unusable.items()},
                      "wall_s": round(time.time() - t0, 1), "loadavg_end": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
