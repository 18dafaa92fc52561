"""Offline what-if: honest probe-harness scores re-judged from their recorded round clocks (CPU
clock) under four rules, each adding rounds from 3, two at a time, as far as the recording goes.

- medians: the harness's rule (medians of runs minus the median null run; the shift check);
- paired: the median of the per-round ratios, its error from their MAD;
- pairedt_mean: the mean of the per-round log ratios, its error from their plain standard
  deviation widened by Student's t for the number of rounds;
- hybrid: the harness's rule where it reports, else pairedt_mean.

    .venv/bin/python docs/measurements/harness-2026-11-28/replay_rules.py RECORD.json ...   # from the root
"""
import json
import math
import statistics
import sys

sys.path.insert(0, "benchmarks")
import eval_harness_bench as B  # noqa: E402

from perfalign.measure.harness import ProbeSettings  # noqa: E402
from perfalign.measure.timing_stats import NoiseGate  # noqa: E402

T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23}
GATE = NoiseGate()


def judged(rounds, label, how):
    """(speedup, its relative standard error, the gap between its two estimates)."""
    if how in ("medians", "paired"):
        return B._judged(rounds, label, how)
    if how == "hybrid":
        m = B._judged(rounds, label, "medians")
        if m[0] is not None and m[1] <= GATE.max_rel_se and m[2] <= GATE.max_rel_se:
            return m
        return judged(rounds, label, "pairedt_mean")
    pairs = [(r["__reference__"] - r["__null__"], r[label] - r["__null__"]) for r in rounds]
    logs = [math.log(b / c) for b, c in pairs if b > 0 and c > 0]
    if len(logs) < 3:
        return None, math.inf, 0.0
    se = statistics.stdev(logs) / math.sqrt(len(logs)) * T975.get(len(logs) - 1, 2.0) / 1.96
    return math.exp(statistics.fmean(logs)), se, 0.0


for path in sys.argv[1:]:
    rows = json.load(open(path))
    print(path)
    for how in ("medians", "paired", "pairedt_mean", "hybrid"):
        withheld, errors = 0, []
        for r in rows:
            rc = r.get("round_clocks")
            if not rc or r.get("clock") != "cpu" or "unusable" in r:
                continue
            labels = [k for k in ("reference", "slow") if r[k]["verdict"] == "OK"]
            if r.get("overhead_ratio", 0) > ProbeSettings.max_overhead_ratio:
                withheld += len(labels)
                continue
            n = 3
            while True:
                est = {k: judged(rc[:n], k, how) for k in labels}
                if n >= len(rc) or not any(se > GATE.target_rel_se or gap > GATE.target_rel_se
                                           for _, se, gap in est.values()):
                    break
                n += 2
            for k, (sp, se, gap) in est.items():
                truth = 1.0 if k == "reference" else r.get("slow_true")
                if sp is None or se > GATE.max_rel_se or gap > GATE.max_rel_se:
                    withheld += 1
                elif truth:
                    errors.append(abs(sp / truth - 1))
        print(f"  {how:13}: withheld {withheld}/{withheld + len(errors)}; within 10%: "
              f"{sum(e <= 0.1 for e in errors)}/{len(errors)}, max {100 * max(errors, default=0):.1f}%")
