"""Score the reference of KernelBench level1/1 (a 64x64 matmul at scale 1/64) against itself
(truth 1.0) N times, one score per sandboxed execution, with the config of
tests/kernelenv/test_score.py (10 rounds at most, 0.3 s budget); write every score's rounds.
Usage: python record_self.py N OUT.json"""
import json
import os
import sys
from pathlib import Path

from perfalign.kernelenv import ScoreConfig, Scorer, load_problem, reference_candidate
from perfalign.sandbox import Sandbox

KB = Path("/work/shared/external/kernelbench")
n, out = int(sys.argv[1]), sys.argv[2]
p = load_problem(KB / "level1/1_Square_matrix_multiplication_.py")
cfg = ScoreConfig(scale=1 / 64, compile_baseline=False, trials=10, min_trials=5, time_budget_s=0.3,
                  allow_reference_ops=True)
rows = []
with Sandbox(workers=1) as sb:
    sc = Scorer(cfg, sandbox=sb)
    for i in range(n):
        s = sc.score(p, reference_candidate(p), "reference")
        row = {"load1": round(os.getloadavg()[0], 2), "speedup": s.speedup_eager, "flags": s.flags,
               "timing": s.timing, "reference": s.eager_times_s, "subject": s.times_s, "alone": s.alone_times_s}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("load1", "speedup")}), s.timing.get("rel_se"), s.timing.get("rule"),
              s.flags[3:], flush=True)
        Path(out).write_text(json.dumps(rows, indent=0))
