"""A/B of the probe driver's per-call overhead (fresh inputs + fingerprints): the *null* program
of ParEval problems (the driver around an empty function) built from two checkouts of perfalign,
run alternately, user CPU seconds per run. Outside the sandbox: this compares two drivers' own
work, nothing else.

    python null_fill_ab.py --a /tmp/abpkg --b /tmp/abpkg_main --calls 40 --reps 3 \\
        --problems 25_reduce_xor,15_graph_edge_count,...

``--a``/``--b``: directories holding a ``perfalign`` package (e.g. a symlink to a git worktree).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PAREVAL = Path(__file__).resolve().parents[4] / "shared" / "external" / "pareval"

DUMP = r"""
import sys
from perfalign.evaluation.tasks.pareval import ParEvalCheckout
p = ParEvalCheckout(sys.argv[1]).problem(sys.argv[2], "serial")
open(sys.argv[3] + "/driver.cpp", "w").write(p.drivers["T"])
open(sys.argv[3] + "/null.cpp", "w").write(p.candidate_source(p.null(), "T"))
"""


def build(root: str, problem: str, out: Path) -> Path:
    out.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", DUMP, str(PAREVAL), problem, str(out)], check=True,
                   env={**os.environ, "PYTHONPATH": root})
    subprocess.run(["g++", "-O3", "-std=c++17", str(out / "driver.cpp"), str(out / "null.cpp"),
                    "-o", str(out / "prog")], check=True)
    return out / "prog"


def user_s(prog: Path, calls: int, seed: int) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run([str(prog)], input=f"1 T {calls} {seed}\n", text=True, stdout=subprocess.DEVNULL, check=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for problem in args.problems.split(","):
            progs = {arm: build(root, problem, Path(tmp) / problem / arm)
                     for arm, root in (("a", args.a), ("b", args.b))}
            times: dict[str, list[float]] = {"a": [], "b": []}
            for rep in range(args.reps):
                for arm in ("a", "b") if rep % 2 == 0 else ("b", "a"):
                    times[arm].append(user_s(progs[arm], args.calls, rep + 1))
            a, b = (statistics.median(times[k]) for k in ("a", "b"))
            print(f"{problem:45} a {a / args.calls * 1e3:7.2f} ms/call  b {b / args.calls * 1e3:7.2f} ms/call  "
                  f"b/a {b / a:5.2f}   runs a {times['a']} b {times['b']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
