"""The counted clocks' busy-host scores against the per-call truth with intervals.

    .venv/bin/python docs/measurements/price-2026-11-29/busy_vs_truth.py BUSY.json [BUSY2.json ...] \
        --truth docs/measurements/price-2026-11-28/counts_after.json [--truth LATER.json]

BUSY.json: eval_harness_bench.py --json records of an ``--ab clock=...`` run. The truth of a slow
control is count_truth.py's ``native`` record (the driver's per-call CPU clock, paired rounds: median
and the 95% interval of the rounds' geometric mean); a later ``--truth`` replaces an earlier one per
problem. The reference's truth is 1.0. Per score: the clock's score, its error against the truth's
median, the error against the interval's ends, and the harness's flags; per clock: withheld share,
reported within 10% of the median, inside the interval widened by 10%, flagged count_contradicts_cpu.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

CONTRADICTED = "count_contradicts_cpu"


def truths(paths: list[str]) -> dict[str, dict]:
    out = {}
    for p in paths:
        for r in json.loads(Path(p).read_text()):
            if r.get("native"):
                out[r["problem"]] = r["native"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("busy", nargs="+")
    ap.add_argument("--truth", action="append", required=True)
    a = ap.parse_args()
    tr = truths(a.truth)
    rows = [r for p in a.busy for r in json.loads(Path(p).read_text()) if "unusable" not in r]
    per_clock: dict[str, list[tuple]] = {}
    print("| problem | clock | reference | slow | truth of slow [95% CI] | error (vs CI ends) | load | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["problem"], r.get("measure_clock") or r["clock"])):
        clock, t = r.get("measure_clock") or r["clock"], tr.get(r["problem"])
        cells = []
        for label in ("reference", "slow"):
            sc = r[label]
            if sc["verdict"] != "OK":
                cells.append(sc["verdict"])
                per_clock.setdefault(clock, []).append(("failed", None, None, sc["flags"]))
                continue
            if "unmeasurable" in sc["flags"]:
                cells.append("withheld")
                per_clock.setdefault(clock, []).append(("withheld", None, None, sc["flags"]))
                continue
            s = sc["speedup"]
            if label == "reference":
                lo = hi = mid = 1.0
            elif t:
                lo, hi, mid = t["ci95"][0], t["ci95"][1], t["median"]
            else:
                lo = hi = mid = None
            err = s / mid - 1 if mid else None
            # distance from the interval: 0 inside it
            dist = None if lo is None else (0.0 if lo <= s <= hi else (s / hi - 1 if s > hi else s / lo - 1))
            per_clock.setdefault(clock, []).append(("reported", err, dist, sc["flags"]))
            flag = f" {CONTRADICTED}" if CONTRADICTED in sc["flags"] else ""
            cells.append(f"{s:.3f}{flag}")
        e = per_clock[clock][-1]
        truth = f"{t['median']:.3f} [{t['ci95'][0]:.3f}, {t['ci95'][1]:.3f}]" if t else "-"
        err = f"{100 * e[1]:+.0f}% ({100 * e[2]:+.0f}%)" if e[0] == "reported" and e[1] is not None else "-"
        print(f"| {r['problem']} | {clock} | {cells[0]} | {cells[1]} | {truth} | {err} | {r.get('load', '-')} "
              f"| {r.get('seconds', '-')} |")
    print()
    for clock, scores in per_clock.items():
        rep = [s for s in scores if s[0] == "reported" and s[1] is not None]
        withheld = sum(s[0] == "withheld" for s in scores)
        failed = sum(s[0] == "failed" for s in scores)
        flagged = sum(CONTRADICTED in s[3] for s in scores)
        print(f"{clock}: withheld {withheld}/{len(scores)}, failed {failed}; reported within 10% of the truth's "
              f"median {sum(abs(s[1]) <= 0.10 for s in rep)}/{len(rep)} (max |error| "
              f"{100 * max(abs(s[1]) for s in rep):.0f}%), within 10% of its interval "
              f"{sum(abs(s[2]) <= 0.10 for s in rep)}/{len(rep)}; flagged {CONTRADICTED}: {flagged}")
    loads = [r["load"] for r in rows if r.get("load") is not None]
    if loads:
        print(f"load after each session: min {min(loads):.1f}, median {statistics.median(loads):.1f}, "
              f"max {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
