"""PolyBench gemm's slow control with its kernel noinline, counted as count_truth.py counts (one session
under cycles calibrates the calls; the null run, the reference and that control once each):
    .venv/bin/python docs/measurements/price-2026-11-29/count_noinline.py   # -> count_noinline.json"""
import dataclasses
import json
import sys

sys.path.insert(0, "benchmarks")
import count_truth as ct

from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
from perfalign.sandbox import Sandbox

p = PolyBenchCheckout("/work/shared/external/polybench").problem("gemm", "reduced")
slow = p.slow.replace("static void perfalign_ref_", "__attribute__((noinline)) static void perfalign_ref_")
assert slow != p.slow
p = dataclasses.replace(p, slow=slow)
rec = ct.Recorder()
with Sandbox(workers=1) as sb:
    c = ct.counted(p, sb, rec)
c["speedups"] = ct.speedups(c)
print(json.dumps({"calls": c["calls"], "per_call": c["per_call"], "speedups": c["speedups"]}))
