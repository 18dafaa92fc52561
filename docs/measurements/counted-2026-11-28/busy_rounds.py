"""Where the withheld honest scores on a busy host come from, from the recorded rounds of the
probe harness's sweeps (CPU clock), and what more rounds or another estimate could do there.

Part 1, per honest score of the busy records: the harness's decision (reported, flagged, withheld
and by which gate), its rounds, the spread of the per-round log ratios (a round's two runs shared
the machine's state), the per-run spread of the same binary (the reference's two copies,
reference and __reference__, in the same round), and the rounds the paired estimate would need
for its error (t-widened) to reach the 6% gate at that spread.

Part 2, every recorded sweep re-judged by the harness's live rule (``hybrid``, adding rounds from
3 two at a time as the harness does, as far as the recording goes) and by candidate rules:
- ``paired_only``: the paired estimate alone;
- ``hybrid@N``: the live rule where the recording has N rounds or more, judged on its first N.
Prints the withheld share and the reported errors against the truth (1.0; the slow control's own
per-call clock).

Part 3, more work per timed run: the per-run spread of the same binary (the reference's two copies
in one round) at target_s 0.3 and 1.0 s, each problem of the stop-31 A/B run at both (a quiet
hour): how the noise scales with the work in a run.

    .venv/bin/python docs/measurements/counted-2026-11-28/busy_rounds.py   # from the repository root
"""
import glob
import json
import math
import statistics

from perfalign.measure.harness import ProbeSettings
from perfalign.measure.timing_stats import (
    T_WIDEN,
    Estimate,
    NoiseGate,
    combined_rel_se,
    hybrid,
    paired_speedup,
    rel_se_of_cost,
    shift,
)

GATE = NoiseGate()
BUSY = ["harness_busy2.json", "harness_busy2_load5.json", "hybrid_busy2.json", "hybrid_busy2_b.json",
        "busy2_selfload.json", "busy2_selfload_b.json", "busy2_beside_suite.json"]


def records():
    paths = sorted(p for p in glob.glob("docs/measurements/harness-*/*.json") if not p.endswith(".contest.json"))
    for p in paths:
        rows = json.load(open(p))
        if isinstance(rows, list) and any(isinstance(r, dict) and r.get("round_clocks") for r in rows):
            yield p, rows


def usable(r):
    return (r.get("round_clocks") and "unusable" not in r and (r.get("measure_clock") or r["clock"]) == "cpu"
            and r.get("overhead_ratio", 0) <= ProbeSettings.max_overhead_ratio)


def pairs_of(rounds, label):
    return [(x["__reference__"] - x["__null__"], x[label] - x["__null__"]) for x in rounds]


def medians(rounds, label):
    null = [x["__null__"] for x in rounds]
    ref, cand = [x["__reference__"] for x in rounds], [x[label] for x in rounds]
    b, c = statistics.median(ref) - statistics.median(null), statistics.median(cand) - statistics.median(null)
    se = combined_rel_se(rel_se_of_cost(cand, null), rel_se_of_cost(ref, null))
    return Estimate(b / c if b > 0 and c > 0 else None, se, shift(pairs_of(rounds, label), b, c))


def passes(e):
    return e.speedup is not None and e.rel_se is not None and e.rel_se <= GATE.max_rel_se and e.gap <= GATE.max_rel_se


def rule(rounds, label, how):
    m, pairs = medians(rounds, label), pairs_of(rounds, label)
    if how == "paired_only":
        return paired_speedup(pairs)
    return hybrid(m, pairs, GATE)


def judged(rc, label, how, cap=None):
    """The rule's estimate after the harness's stopping rule (from 3 rounds, two at a time)."""
    n, last = 3, len(rc) if cap is None else min(cap, len(rc))
    while True:
        e = rule(rc[:n], label, how)
        if n + 2 > last or not ((e.rel_se or 0) > GATE.target_rel_se or e.gap > GATE.target_rel_se):
            return e, n
        n += 2


def truth(r, label):
    return 1.0 if label == "reference" else r.get("slow_true")


def part1():
    print("Part 1: honest scores of the busy records (CPU clock), as the harness judged them live")
    print(f"{'record':26} {'problem':36} {'ctl':4} {'load':>5} {'decision':24} {'n':>2} {'sd_log':>6} "
          f"{'copy_sd':>7} {'paired':>7} {'p_se':>5} {'n@6%':>5}")
    need = []
    for name in BUSY:
        for r in json.load(open(f"docs/measurements/harness-2026-11-28/{name}")):
            if not r.get("round_clocks") or "unusable" in r:
                continue
            rc = r["round_clocks"]
            copies = [math.log((x["__reference__"] - x["__null__"]) / (x["reference"] - x["__null__"]))
                      for x in rc if "reference" in x and x["reference"] > x["__null__"] < x["__reference__"]]
            for label in ("reference", "slow"):
                sc = r[label]
                if sc["verdict"] != "OK":
                    continue
                flags, msg = sc["flags"], sc.get("message") or ""
                if "unmeasurable" in flags:
                    why = "overhead" if "overhead" in msg else "shift" if "shifted" in msg else "noise"
                else:
                    why = "reported, imprecise" if "imprecise_timing" in flags else "reported"
                if "paired_timing" in flags:
                    why += ", paired"
                logs = [math.log(b / c) for b, c in pairs_of(rc, label) if b > 0 and c > 0]
                sd = statistics.stdev(logs) if len(logs) > 2 else float("nan")
                p = paired_speedup(pairs_of(rc, label))
                n6 = next((n for n in range(3, 200) if sd * T_WIDEN.get(n - 1, 1.1) / math.sqrt(n) <= GATE.max_rel_se),
                          None) if sd == sd else None
                if "unmeasurable" in flags and n6:
                    need.append(n6)
                err = "" if sc["speedup"] is None or not truth(r, label) else \
                    f" err {100 * (sc['speedup'] / truth(r, label) - 1):+.1f}%"
                print(f"{name[:-5]:26} {r['problem'][:36]:36} {label[:4]:4} {r.get('load', 0) or 0:5.1f} "
                      f"{why[:24]:24} {len(rc):2} {sd:6.3f} "
                      f"{statistics.stdev(copies) if len(copies) > 2 else float('nan'):7.3f} "
                      f"{p.speedup or float('nan'):7.3f} {100 * (p.rel_se or float('nan')):4.1f}% {n6 or '-':>5}"
                      + err)
    if need:
        print(f"withheld for noise: rounds the paired estimate would need for its error to reach 6%: "
              f"median {statistics.median(need)}, range {min(need)}-{max(need)} (the harness stops at "
              f"{ProbeSettings.max_repeats})")


def part2():
    print("\nPart 2: every recorded sweep re-judged (CPU clock)")
    print(f"{'record':52} {'rule':13} {'withheld':>9} {'within10':>9} {'max|err|':>8} {'rounds':>6}")
    totals = {}
    for path, rows in records():
        for how, cap in (("hybrid", None), ("paired_only", None), ("hybrid", 5),
                         ("hybrid", 7)):
            withheld, errs, rounds = 0, [], 0
            for r in rows:
                if not usable(r):
                    continue
                for label in ("reference", "slow"):
                    if r[label]["verdict"] != "OK" or not truth(r, label):
                        continue
                    e, n = judged(r["round_clocks"], label, how, cap)
                    rounds += n
                    if not passes(e):
                        withheld += 1
                    else:
                        errs.append(abs(e.speedup / truth(r, label) - 1))
            tag = f"{how}@{cap}" if cap else how
            t = totals.setdefault(tag, [0, 0, 0, 0.0])
            t[0] += withheld
            t[1] += withheld + len(errs)
            t[2] += sum(x > 0.10 for x in errs)
            t[3] = max(t[3], max(errs, default=0))
            print(f"{path[18:70]:52} {tag:13} {withheld:>4}/{withheld + len(errs):<4} "
                  f"{sum(x <= 0.10 for x in errs):>4}/{len(errs):<4} {100 * max(errs, default=0):7.1f}% {rounds:>6}")
    print("\nAll records together:")
    for tag, (w, n, off, mx) in totals.items():
        print(f"  {tag:13} withheld {w}/{n} ({100 * w / n:.0f}%), reported off by more than 10%: {off} "
              f"(max {100 * mx:.1f}%)")


def copy_sd(rc):
    logs = [math.log((x["__reference__"] - x["__null__"]) / (x["reference"] - x["__null__"])) for x in rc
            if x["reference"] > x["__null__"] < x["__reference__"]]
    return statistics.stdev(logs) if len(logs) > 2 else None


def part3():
    rows = json.load(open("docs/measurements/harness-2026-11-26/harness_ab_target_s.json"))
    by = {}
    for r in rows:
        if usable(r):
            by.setdefault(r["problem"], {})[r["arm"]] = copy_sd(r["round_clocks"])
    ratios = [a["target_s=0.3"] / a["target_s=1.0"] for a in by.values()
              if a.get("target_s=0.3") and a.get("target_s=1.0")]
    sd03 = [a["target_s=0.3"] for a in by.values() if a.get("target_s=0.3")]
    sd10 = [a["target_s=1.0"] for a in by.values() if a.get("target_s=1.0")]
    print(f"\nPart 3: per-run log spread of the same binary, median over problems: target_s 0.3: "
          f"{statistics.median(sd03):.3f}, 1.0: {statistics.median(sd10):.3f}; per problem 0.3 / 1.0: median "
          f"{statistics.median(ratios):.2f} over {len(ratios)} problems (1/sqrt(T) would give "
          f"{math.sqrt(1 / 0.3):.2f})")


if __name__ == "__main__":
    part1()
    part2()
    part3()
