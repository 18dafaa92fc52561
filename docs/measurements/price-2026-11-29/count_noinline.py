"""PolyBench slow controls as generated and with their kernel noinline, counted as count_truth.py
counts (one session under cycles calibrates the calls; the null run, the reference and the control
once each); "both_noinline": the reference's kernel noinline too. Where "generated" and
"noinline" differ, the generated control runs other code than the reference's twice.

    .venv/bin/python docs/measurements/price-2026-11-29/count_noinline.py [KERNEL ...]   # default: gemm
"""
import dataclasses
import json
import sys

sys.path.insert(0, "benchmarks")
import count_truth as ct

from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
from perfalign.sandbox import Sandbox

pb, rec = PolyBenchCheckout("/work/shared/external/polybench"), ct.Recorder()
with Sandbox(workers=1) as sb:
    for name in sys.argv[1:] or ["gemm"]:
        p = pb.problem(name, "reduced")
        row = {"kernel": name}
        def noinline(code):
            return code.replace("static void perfalign_ref_", "__attribute__((noinline)) static void perfalign_ref_")

        for how, ref, slow in (("generated", p.reference, p.slow), ("noinline", p.reference, noinline(p.slow)),
                               ("both_noinline", noinline(p.reference), noinline(p.slow))):
            try:
                c = ct.counted(dataclasses.replace(p, reference=ref, slow=slow), sb, rec)
            except RuntimeError as e:
                row[how] = str(e)
                continue
            row[how] = {"calls": c["calls"], "per_call": c["per_call"], "speedups": ct.speedups(c)}
        print(json.dumps(row), flush=True)
