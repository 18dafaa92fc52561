"""How close the evaluation harness comes to the true speedup of honest programs, on the real
ParEval and PolyBench/C problems (the shared checkouts, or yours).

For every (problem, execution model) one probe session scores two honest controls beside the
suite's reference, exactly as it scores model samples:

- ``reference``: the suite's baseline itself; its true speedup is 1.0 (same code);
- ``slow``: the baseline run twice on the same memory (outputs restored in between); its true
  speedup is its own per-call clock against the reference's (the driver times each call in
  process: exact for honest programs, never used as a score because a program could fake it).

The harness's number comes from outside the program (the sandbox's CPU/wall accounting of whole
runs minus a null run, per call). Printed per problem: calls per run, the harness's and the true
speedups, and the relative error; then the share within 10% and the median error.

    .venv/bin/python benchmarks/eval_harness_bench.py                      # a few problems, serial
    .venv/bin/python benchmarks/eval_harness_bench.py --models serial,omp,mpi --problems 02_dense_la_gemm
    .venv/bin/python benchmarks/eval_harness_bench.py --all --json runs/harness_sweep.json   # every problem
    .venv/bin/python benchmarks/eval_harness_bench.py --all --problems ""                   # all of PolyBench only
    .venv/bin/python benchmarks/eval_harness_bench.py --summarize runs/harness_sweep.json   # its summary again
    .venv/bin/python benchmarks/eval_harness_bench.py --target-s 0.3,1.0   # A/B: each session at each, side by side
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfalign.evaluation.tasks.pareval import ParEvalCheckout  # noqa: E402
from perfalign.evaluation.tasks.polybench import PolyBenchCheckout  # noqa: E402
from perfalign.measure.harness import ProbeScore, ProbeSettings, ProblemUnusable, score_problem  # noqa: E402
from perfalign.sandbox import Sandbox  # noqa: E402

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
DEFAULT_PAREVAL = ["02_dense_la_gemm", "03_dense_la_axpy", "27_reduce_average", "41_sort_k-th_smallest_element",
                   "53_stencil_2d_jacobi_5-point_stencil"]
DEFAULT_POLYBENCH = ["gemm", "atax", "jacobi-2d"]


def _err(measured: float | None, truth: float | None) -> float | None:
    if not measured or not truth:
        return None
    return measured / truth - 1


def _save(path: str | None, rows: list[dict]) -> None:
    """After every problem: a long sweep that is stopped keeps what it measured."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(rows, indent=1))


# why a score was not reported, by a phrase of the harness's message
_WHY = {"overhead": "overhead over the work", "uncertain": "noise", "shifted": "machine speed shifted"}


def summarize(rows: list[dict]) -> None:
    """Per score (each control of each session), by what the harness said of it: reported
    unflagged, reported with imprecise_timing, or not reported (unmeasurable); one summary per
    ``target_s`` where the rows hold several (an A/B run)."""
    arms = sorted({r.get("target_s") for r in rows if r.get("target_s") is not None})
    if len(arms) > 1:
        for arm in arms:
            print(f"--- target_s = {arm}")
            summarize([r for r in rows if r.get("target_s") == arm])
        return
    for clock in ("cpu", "wall"):
        kinds: dict[str, list[float]] = {"unflagged": [], "flagged imprecise": []}
        unreported: dict[str, int] = {}
        for r in rows:
            if r.get("clock") != clock:
                continue
            for label in ("reference", "slow"):
                sc, err = r[label], r.get(f"err_{label}")
                if sc["verdict"] != "OK":
                    continue
                if "unmeasurable" in sc["flags"]:
                    why = next((v for k, v in _WHY.items() if k in (sc.get("message") or "")), "other")
                    unreported[why] = unreported.get(why, 0) + 1
                elif err is not None:
                    kinds["flagged imprecise" if "imprecise_timing" in sc["flags"] else "unflagged"].append(abs(err))
        for label, sub in kinds.items():
            if sub:
                print(f"{clock:4} clock, {label}: {sum(e <= 0.10 for e in sub)}/{len(sub)} honest scores within 10% "
                      f"of the true speedup, median |error| {100 * statistics.median(sub):.1f}%, "
                      f"max {100 * max(sub):.1f}%")
        if unreported:
            print(f"{clock:4} clock, not reported (unmeasurable): {sum(unreported.values())} scores ("
                  + ", ".join(f"{why}: {n}" for why, n in sorted(unreported.items())) + ")")
    # is the harness's own error estimate honest? |error| in units of the score's estimated
    # relative standard error, over every OK score (a speedup not reported: its kept estimate)
    z = []
    for r in rows:
        for label in ("reference", "slow") if "unusable" not in r else ():
            sc, truth = r[label], 1.0 if label == "reference" else r.get("slow_true")
            est = ProbeScore(**sc).estimate()
            if sc["verdict"] == "OK" and sc.get("rel_se") and est and truth:
                z.append(abs(est / truth - 1) / sc["rel_se"])
    if len(z) >= 10:
        z.sort()
        print(f"|error| / estimated standard error over {len(z)} scores: median {statistics.median(z):.2f} "
              f"(normal: 0.67), 90th percentile {z[int(0.9 * len(z))]:.2f} (normal: 1.64)")
    unusable = [r for r in rows if "unusable" in r]
    wrong = [(r["problem"], k) for r in rows if "unusable" not in r for k in ("reference", "slow")
             if r[k]["verdict"] != "OK"]
    print(f"{len(rows)} sessions: {len(unusable)} unusable (the suite's own reference fails here); "
          f"honest controls not scored OK: {wrong or 'none'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pareval-dir", default=str(EXTERNAL / "pareval"))
    ap.add_argument("--polybench-dir", default=str(EXTERNAL / "polybench"))
    ap.add_argument("--problems", default=None,
                    help="comma-separated ParEval problems (default: a sample of 5; \"\": none)")
    ap.add_argument("--kernels", default=None,
                    help="comma-separated PolyBench kernels (default: a sample of 3; \"\": none)")
    ap.add_argument("--models", default="serial", help="ParEval models: serial,omp,mpi")
    ap.add_argument("--all", action="store_true",
                    help="every ParEval problem and PolyBench kernel "
                         "(except a suite named empty by --problems/--kernels \"\")")
    ap.add_argument("--profile", default="embedded", choices=("embedded", "production"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--target-s", default=None,
                    help="ProbeSettings.target_s, or several comma-separated: every session runs once at "
                         "each, in a fresh random order per problem (an A/B in one run)")
    ap.add_argument("--json", default=None, help="also write every record here")
    ap.add_argument("--summarize", default=None, metavar="JSON", help="only print the summary of an earlier --json")
    args = ap.parse_args()
    if args.summarize:
        if not Path(args.summarize).is_file():
            ap.error(f"--summarize {args.summarize}: no such file (write one with --json)")
        summarize(json.loads(Path(args.summarize).read_text()))
        return 0

    pe, pb = ParEvalCheckout(args.pareval_dir), PolyBenchCheckout(args.polybench_dir)
    # named problems/kernels ("" = none) win over --all, so one suite can be swept alone
    problems = args.problems.split(",") if args.problems is not None else pe.names() if args.all else DEFAULT_PAREVAL
    kernels = args.kernels.split(",") if args.kernels is not None else pb.names() if args.all else DEFAULT_POLYBENCH
    work = [("pareval", n, m) for m in args.models.split(",") for n in problems if n] + \
           [("polybench", k, "serial") for k in kernels if k]
    arms = [float(v) for v in args.target_s.split(",")] if args.target_s else [ProbeSettings.target_s]
    order = random.Random(0)
    rows = []
    print(f"{'suite':9} {'problem':40} {'model':6} {'clock':5} {'calls':>5} {'ref':>6} {'slow':>6} "
          f"{'slow true':>9} {'err ref':>8} {'err slow':>8} {'s':>5}", flush=True)
    t_all = time.time()
    with Sandbox(workers=1) as sb:
        for suite, name, model, target_s in ((*w, a) for w in work for a in order.sample(arms, len(arms))):
            settings = ProbeSettings(repeats=args.repeats, target_s=target_s)
            t0 = time.time()
            try:
                p = (pe.problem(name, model, args.profile, threads=args.threads, ranks=args.ranks)
                     if suite == "pareval" else pb.problem(name, args.profile))
                scores, info = score_problem(sb, p, {"reference": p.reference, "slow": p.slow}, settings)
            except ProblemUnusable as e:
                rows.append({"suite": suite, "problem": name, "model": model, "target_s": target_s,
                             "unusable": str(e)[:300]})
                _save(args.json, rows)
                print(f"{suite:9} {name:40} {model:6} UNUSABLE: {str(e)[:150]}", flush=True)
                continue
            ref, slow = scores["reference"], scores["slow"]
            truth = (slow.inprocess_baseline_s / slow.inprocess_runtime_s
                     if slow.inprocess_runtime_s and slow.inprocess_baseline_s else None)
            row = {"suite": suite, "problem": name, "model": model, "target_s": target_s, "clock": p.clock,
                   "calls": info.get("calls"),
                   "overhead_ratio": info.get("overhead_ratio"), "reference_rel_se": info.get("reference_rel_se"),
                   "round_clocks": info.get("round_clocks"), "flags": sorted(set(ref.flags) | set(slow.flags)),
                   "reference": ref.to_dict(), "slow": slow.to_dict(), "slow_true": truth,
                   "err_reference": _err(ref.speedup, 1.0) if ref.verdict == "OK" else None,
                   "err_slow": _err(slow.speedup, truth) if slow.verdict == "OK" else None,
                   "seconds": round(time.time() - t0, 1)}
            rows.append(row)
            _save(args.json, rows)
            def f(v, d=2):
                return "—" if v is None else f"{v:.{d}f}"

            verdicts = "" if ref.verdict == slow.verdict == "OK" else f" {ref.verdict}/{slow.verdict}"
            verdicts += "".join(f" [{f}]" for f in row["flags"] if f in ("imprecise_timing", "unmeasurable"))
            print(f"{suite:9} {name:40} {model:6} {p.clock:5} {row['calls']:>5} "
                  + (f"t={target_s} " if len(arms) > 1 else "") +
                  f"{f(ref.speedup):>6} {f(slow.speedup):>6} "
                  f"{f(truth):>9} {f(row['err_reference'] and 100 * row['err_reference'], 1):>7}% "
                  f"{f(row['err_slow'] and 100 * row['err_slow'], 1):>7}% {row['seconds']:>5}{verdicts}", flush=True)
    print()
    summarize(rows)
    print(f"{time.time() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
