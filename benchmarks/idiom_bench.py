"""Per idiom family (perfdata/idioms.py): the slow/fast CPU-time ratio of the two reference
programs on the big test, measured in the sandbox in one run (``controlled.measure_references``,
``Sandbox.run_many``), and the fast/slow length ratio (characters of the whole program).

One instance per (family, number k) by default, since the gap can depend on k (a window size, a
count); ``--per-family 1`` measures one instance per family (faster).

    nice -n 5 .venv/bin/python benchmarks/idiom_bench.py [--repeats 3] [--per-family N | --heldout]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfalign.perfdata.controlled import measure_references  # noqa: E402
from perfalign.perfdata.idioms import FAMILIES, instances  # noqa: E402


def pick(per_family: int | None, heldout: bool = False) -> list:
    train, held = instances()
    if heldout:
        return held
    seen, out = set(), []
    for inst in train + held:
        key = (inst.family.name, inst.k)
        if key not in seen and (per_family is None or sum(k[0] == key[0] for k in seen) < per_family):
            seen.add(key)
            out.append(inst)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3, help="runs per test (the median is kept)")
    ap.add_argument("--per-family", type=int, default=None, metavar="N",
                    help="instances per family (default: one per number k of the family)")
    ap.add_argument("--heldout", action="store_true", help="every held-out instance instead (the unseen phrasing "
                                                          "with every story)")
    args = ap.parse_args()
    from perfalign.sandbox import Sandbox

    chosen = pick(args.per_family, args.heldout)
    print(f"load before: {os.getloadavg()[0]:.1f}; {len(chosen)} instances, repeats {args.repeats}", flush=True)
    t0 = time.time()
    with Sandbox(backend="auto", workers=2) as sb:
        rt = measure_references(chosen, sb, repeats=args.repeats)
    print(f"measured in {time.time() - t0:.0f} s; load after: {os.getloadavg()[0]:.1f}\n")
    print("family | k | fast CPU s | slow CPU s | slow/fast: min / median / max | fast/slow length")
    print("--- | --- | --- | --- | --- | ---")
    for fam in FAMILIES:
        insts = [i for i in chosen if i.family is fam]
        ratios = [rt[i.problem_id]["slow"] / rt[i.problem_id]["fast"] for i in insts]
        fast = statistics.median(rt[i.problem_id]["fast"] for i in insts)
        slow = statistics.median(rt[i.problem_id]["slow"] for i in insts)
        length = statistics.median(len(i.program("fast")) / len(i.program("slow")) for i in insts)
        ks = ", ".join(str(i.k) for i in insts)
        print(f"{fam.name} | {ks} | {fast:.4f} | {slow:.4f} | {min(ratios):.1f} / {statistics.median(ratios):.1f} / "
              f"{max(ratios):.1f} | {length:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
