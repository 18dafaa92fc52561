"""The contest protocol's reference against itself on this (busy) host: a CPU-bound C++ program
(~0.1-0.3 s) scored as a candidate beside itself as the baseline, --trials times. Per trial: the
current main's rule (median / median of the first 3 rounds) and the live score (measure/contest.py:
timing_stats.hybrid, rounds added while imprecise), from the same rounds; truth 1.0.

    .venv/bin/python docs/measurements/harness-2026-11-28/contest_self.py --trials 6   # from the root
"""
import argparse
import os
import statistics

import perfalign.measure.contest as contest
from perfalign.measure.contest import ContestProblem, ContestSettings, score_contest
from perfalign.sandbox import Limits, Sandbox, TestCase

BODY = "unsigned long s=0; for(long i=0;i<n;i++) s+=(unsigned long)(i*i%1000003);"
PROGRAM = ("#include <cstdio>\nint main(){ long n; if(scanf(\"%ld\",&n)!=1) return 1; " + BODY +
           " printf(\"%lu\\n\", s); return 0; }\n")

ap = argparse.ArgumentParser()
ap.add_argument("--trials", type=int, default=6)
ap.add_argument("--n", type=int, default=30_000_000)
args = ap.parse_args()
task = ContestProblem("self", [TestCase(f"{args.n}\n", None)], Limits(time_s=20.0, memory_mb=256),
                      [(PROGRAM, None)], "cpp", "self")
seen = []
_pairs = contest._pairs
contest._pairs = lambda base, cands: seen.append(_pairs(base, cands)) or seen[-1]
before, after = [], []
with Sandbox(workers=1) as sb:
    for i in range(args.trials):
        seen.clear()
        score, _ = score_contest(sb, task, PROGRAM, ContestSettings())
        pairs = seen[-1]
        first3 = pairs[:3]
        b = statistics.median(x for x, _ in first3) / statistics.median(y for _, y in first3)
        before.append(b)
        after.append(score.speedup)
        print(f"trial {i}: rounds {score.rounds} runtime {statistics.median(y for _, y in pairs):.3f} s  "
              f"main's rule {b:.3f}  live {score.speedup:.3f} (rel_se {score.rel_se}) {score.flags}  "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
for name, xs in (("main's rule", before), ("live", after)):
    print(f"{name:12}: median {statistics.median(xs):.3f}, range [{min(xs):.3f}, {max(xs):.3f}], "
          f"max |error| {100 * max(abs(x - 1) for x in xs):.1f}%")
