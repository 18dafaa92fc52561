"""Kernel environment figures: the reference-as-candidate oracle over KernelBench problems (should be
correct at ~1x) and our own CPU kernels (kernelenv/oracles/level1) against eager and torch.compile.

    .venv/bin/python benchmarks/kernel_eval_bench.py oracles            # our kernels, with the Inductor baseline
    .venv/bin/python benchmarks/kernel_eval_bench.py reference --every 5 [--levels level1 level2] [--workers 2]
    .venv/bin/python benchmarks/kernel_eval_bench.py self --n 10 --scale 0.015625 [--before DIR]

``self``: the reference scored against itself ``--n`` times per problem (a few small level-1
problems, the copies of a problem in one sandboxed execution): min / median / max of the
self-speedup (the truth is 1.0) and the share withheld.
``--record JSON`` writes each self-scoring's rounds (reference, subject, reference alone) with its
score and the load average: the recorded rounds ``tests/kernelenv/test_timing.py`` re-judges.
``--before DIR`` also scores with a snapshot of an older ``kernelenv`` package (DIR holds it as
``kernelenv_before/``), alternating old and new scorings so both see the same machine.

Prints a table and the metrics (correct %, fast_p, % faster than torch.compile, geometric means);
``--out DIR`` also writes the report (report.md / report.json). Scale: auto (one eager call <= ~20 ms)
unless ``--scale``.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
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
SELF_PROBLEMS = ["19_ReLU", "22_Tanh", "23_Softmax", "100_HingeLoss"]


def _summary(values: list, withheld: int) -> str:
    vals = sorted(v for v in values if v is not None)
    n = len(values)
    if not vals:
        return f"n={n} withheld {withheld}/{n}"
    return (f"n={n} min {vals[0]:.3f} median {statistics.median(vals):.3f} max {vals[-1]:.3f} "
            f"spread(max/min) {vals[-1] / vals[0]:.2f} withheld {withheld}/{n}")


def self_speedups(args) -> None:
    """The reference against itself: its speedup should read 1.0; the spread is the noise a
    reward sees. The reference calls its own operators: reference ops allowed."""
    cfg = ScoreConfig(scale=args.scale, compile_baseline=False, allow_reference_ops=True)
    with Sandbox(workers=1) as sb:
        scorers = {"after": Scorer(cfg, sandbox=sb)}
        if args.before:
            sys.path.insert(0, str(args.before))
            import kernelenv_before as old  # a snapshot of the package, its guest.py beside it

            scorers["before"] = old.Scorer(old.ScoreConfig(scale=args.scale, compile_baseline=False,
                                                            allow_reference_ops=True), sandbox=sb)
        problems = [load_problem(args.kernelbench / "level1" / f"{stem}.py") for stem in args.problems]
        results = {(name, p.name): [] for name in scorers for p in problems}
        records = []
        t0 = time.monotonic()
        for k, p in enumerate(problems):
            src = reference_candidate(p)
            for name in sorted(scorers, reverse=k % 2 == 1):  # alternate which goes first
                # --n copies in one sandboxed execution (score_many): one torch start-up per test
                for i, s in enumerate(scorers[name].score_many(p, [(f"reference-{i}", src) for i in range(args.n)])):
                    withheld = s.reward is None or "unmeasurable" in s.flags
                    records.append({"scorer": name, "problem": p.name, "scale": s.scale, "speedup": s.speedup_eager,
                                    "flags": s.flags, "timing": s.timing, "reference": s.eager_times_s,
                                    "subject": s.times_s, "alone": getattr(s, "alone_times_s", []),
                                    "load": round(os.getloadavg()[0], 2)})
                    results[(name, p.name)].append((s.speedup_eager, withheld, s.verdict))
                    flags = " ".join(f for f in s.flags if not f.startswith(("cpu:", "scale:")))
                    print(f"{name:6s} {p.name:32s} {i:2d} {s.verdict:10s} x{s.speedup_eager or 0:6.3f} "
                          f"reward {s.reward} {s.seconds:5.1f}s {flags} {getattr(s, 'timing', '')}", flush=True)
                if args.record:  # after every execution: a stopped run keeps what it measured
                    args.record.parent.mkdir(parents=True, exist_ok=True)
                    args.record.write_text(json.dumps(records, indent=1))
    print(f"\n{sum(len(v) for v in results.values())} scorings in {time.monotonic() - t0:.0f} s "
          f"(scale {args.scale}, one sandbox worker)\n")
    for (name, prob), rows in sorted(results.items()):
        print(f"{name:6s} {prob:32s} " + _summary([v for v, w, _ in rows if not w], sum(w for _, w, _ in rows))
              + ("" if all(v == "correct" for _, _, v in rows) else f" verdicts {[v for _, _, v in rows]}"))
    for name in scorers:
        rows = [r for (n, _), rs in results.items() if n == name for r in rs]
        print(f"{name:6s} {'all':32s} " + _summary([v for v, w, _ in rows if not w], sum(w for _, w, _ in rows)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["oracles", "reference", "self"])
    ap.add_argument("--n", type=int, default=10, help="self: scorings per problem")
    ap.add_argument("--problems", nargs="+", default=SELF_PROBLEMS, help="self: level-1 problem stems")
    ap.add_argument("--record", type=Path, default=None, help="self: write every scoring's rounds to this JSON")
    ap.add_argument("--before", type=Path, default=None, help="self: a folder holding kernelenv_before/")
    ap.add_argument("--kernelbench", type=Path, default=KB)
    ap.add_argument("--levels", nargs="+", default=["level1", "level2"])
    ap.add_argument("--every", type=int, default=1, help="reference: every Nth problem of each level...")
    ap.add_argument("--offset", type=int, default=0, help="...starting at this index")
    ap.add_argument("--workers", type=int, default=1, help="problems scored at once (1 for clean timings)")
    ap.add_argument("--scale", type=float, default=None)
    ap.add_argument("--no-compile-baseline", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if args.what == "self":
        self_speedups(args)
        return
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
    print(markdown(summarize(scores), scores, [], cfg))
    if args.out:
        write_report(args.out, scores, [], cfg)


if __name__ == "__main__":
    main()
