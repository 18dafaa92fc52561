"""The count-vs-CPU cross-check on the counted sessions of a busy sweep: per honest control (and the
reference read as a candidate beside the slow control as its baseline: an honest program ~2x
faster, the case the check exists for), the count's speedup, the CPU-time speedup the sandbox's
native runs beside the counts give (medians of runs, each minus the median null run), the machine's
noise (the reference's native cost against the null runs, timing_stats.rel_se_of_cost), and whether
the harness's check (ProbeSession._count_contradicted's rule) would flag it.

    .venv/bin/python docs/measurements/counted-2026-11-28/cross_check.py RECORD.json ...
"""
import json
import math
import statistics
import sys

from perfalign.measure.timing_stats import NoiseGate, rel_se_of_cost, rounds_estimate
from perfalign.sandbox.clock import count_contradicts_cpu

GATE = NoiseGate()


def estimate(rounds, base, cand):
    return rounds_estimate([(r[base] - r["__null__"], r[cand] - r["__null__"]) for r in rounds], GATE)


def main():
    flagged = checked = 0
    for path in sys.argv[1:]:
        for r in json.load(open(path)):
            if "unusable" in r or not r.get("round_native_s"):
                continue
            counts, native = r["round_clocks"], r["round_native_s"]
            for base, cand in (("__reference__", "reference"), ("__reference__", "slow"), ("slow", "reference")):
                count = estimate(counts, base, cand)
                nat = {k: [x[k] for x in native] for k in ("__null__", "__reference__", base, cand)}
                machine = rel_se_of_cost(nat["__reference__"], nat["__null__"])
                null = statistics.median(nat["__null__"])
                b, c = statistics.median(nat[base]) - null, statistics.median(nat[cand]) - null
                cpu = b / c if b > 0 and c > 0 else None
                margin = max(GATE.target_rel_se, 3 * (count.rel_se or 0.0))
                judged = count.speedup > 1 + margin and cpu is not None and machine is not None
                flag = judged and count_contradicts_cpu(count.speedup, cpu, 3 * math.sqrt(2) * machine)
                checked += judged
                flagged += flag
                print(f"{r['problem'][:30]:30} {r['measure_clock']:12} {cand + ' vs ' + base.strip('_'):24} "
                      f"count {count.speedup:6.3f}  native CPU {cpu or float('nan'):6.3f} "
                      f"(machine's noise {100 * (machine or float('nan')):5.1f}%)  "
                      f"{'CONTRADICTED' if flag else 'checked, agrees' if judged else 'not checked (count <= 1)'}")
    print(f"honest pairs checked: {checked}, flagged count_contradicts_cpu: {flagged}")


if __name__ == "__main__":
    main()
