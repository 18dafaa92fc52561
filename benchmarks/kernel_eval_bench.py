"""Kernel environment figures: the reference-as-candidate oracle over KernelBench problems (should be
correct at ~1x) and our own CPU kernels (kernelenv/oracles/level1) against eager and torch.compile.

    .venv/bin/python benchmarks/kernel_eval_bench.py oracles            # our kernels, with the Inductor baseline
    .venv/bin/python benchmarks/kernel_eval_bench.py reference --every 5 [--levels level1 level2] [--workers 2]

Prints a table and the metrics (correct %, fast_p, % faster than torch.compile, geometric means);
``--out DIR`` also writes the report (report.md / report.json). Scale: auto (one eager call <= ~20 ms)
unless ``--scale``.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfalign.kernelenv import (  # noqa: E402
    ScoreConfig,
    Scorer,
    load_problem,
    load_problems,
    reference_candidate,
    summarize,
)
from perfalign.kernelenv.evaluate import markdown, write_report  # noqa: E402
from perfalign.sandbox import Sandbox  # noqa: E402

KB = ROOT.parent / "shared" / "external" / "kernelbench"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["oracles", "reference"])
    ap.add_argument("--kernelbench", type=Path, default=KB)
    ap.add_argument("--levels", nargs="+", default=["level1", "level2"])
    ap.add_argument("--every", type=int, default=1, help="reference: every Nth problem of each level...")
    ap.add_argument("--offset", type=int, default=0, help="...starting at this index")
    ap.add_argument("--workers", type=int, default=1, help="problems scored at once (1 for clean timings)")
    ap.add_argument("--scale", type=float, default=None)
    ap.add_argument("--no-compile-baseline", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cfg = ScoreConfig(scale=args.scale, compile_baseline=not args.no_compile_baseline,
                      allow_reference_ops=args.what == "reference")
    if args.what == "oracles":
        jobs = [(load_problem(args.kernelbench / "level1" / p.name), p.read_text(), f"oracle:{p.stem}")
                for p in sorted((ROOT / "kernelenv" / "oracles" / "level1").glob("*.py"))]
    else:
        jobs = []
        for level in args.levels:
            problems, _ = load_problems(args.kernelbench / level)
            jobs += [(p, reference_candidate(p), "reference") for p in problems[args.offset::args.every]]
    t0 = time.monotonic()
    with Sandbox(workers=args.workers) as sb:
        scorer = Scorer(cfg, sandbox=sb)

        def one(job):
            s = scorer.score(*job)
            print(f"{s.problem:70s} {s.verdict:14s} eager x{s.speedup_eager or 0:6.2f} "
                  f"compile x{s.speedup_compile or 0:6.2f} scale {s.scale} {s.seconds:6.1f}s "
                  f"{' '.join(f for f in s.flags if f.startswith('hack:'))} {s.message[:120]}", flush=True)
            return s

        with cf.ThreadPoolExecutor(args.workers) as pool:
            scores = list(pool.map(one, jobs))
    print(f"\n{len(scores)} scored in {time.monotonic() - t0:.0f} s\n")
    print(markdown(summarize(scores), scores, [], dataclasses.replace(cfg)))
    if args.out:
        write_report(args.out, scores, [], cfg)


if __name__ == "__main__":
    main()
