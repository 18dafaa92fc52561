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
    .venv/bin/python benchmarks/eval_harness_bench.py --all --json runs/harness_sweep.json --resume  # after a stop
    .venv/bin/python benchmarks/eval_harness_bench.py --all --problems ""                   # all of PolyBench only
    .venv/bin/python benchmarks/eval_harness_bench.py --summarize runs/harness_sweep.json   # its summary again
    .venv/bin/python benchmarks/eval_harness_bench.py --replay runs/harness_sweep.json      # the paired what-if
    .venv/bin/python benchmarks/eval_harness_bench.py --ab target_s=0.3,1.0   # A/B: each session at each, side by side
    .venv/bin/python benchmarks/eval_harness_bench.py --busy 2 --ab clock=cpu,instructions,cycles  # the counted clocks
    .venv/bin/python benchmarks/eval_harness_bench.py --busy 2 ...           # two CPU-bound processes beside it
    .venv/bin/python benchmarks/eval_harness_bench.py --busy 2 --contest-self 6 ...  # and the contest self-score

Under a count (``--ab clock=...``) the slow control's truth is its per-call CPU clock in the same
problem's cpu session, when the run has one: read under valgrind, that clock measures the emulator.

The issue's busy-host target (load ~2x the cores, e.g. ``--busy 2`` on an otherwise quiet 2-core
host): at most 15% of honest scores withheld, every reported one within 10% of the truth, and the
contest protocol's reference against itself within +-10%. The closing lines print each figure
beside its target, with the load average seen after each session.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfalign.evaluation.tasks.pareval import ParEvalCheckout  # noqa: E402
from perfalign.evaluation.tasks.polybench import PolyBenchCheckout  # noqa: E402
from perfalign.measure.contest import ContestProblem, ContestSettings, score_contest  # noqa: E402
from perfalign.measure.harness import ProbeScore, ProbeSettings, ProblemUnusable, score_problem  # noqa: E402
from perfalign.measure.timing_stats import (  # noqa: E402
    MEDIAN_EFFICIENCY,
    Estimate,
    NoiseGate,
    combined_rel_se,
    hybrid,
    rel_se_of_cost,
    shift,
    spread,
)
from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402
from perfalign.sandbox.clock import CONTRADICTED, DETERMINISTIC  # noqa: E402

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
    arm of an A/B run (``--ab``: rows that carry an ``arm``)."""
    _native_truths(rows)
    if _per_arm(rows, summarize):
        return
    for clock in ("cpu", "wall", *DETERMINISTIC):
        kinds: dict[str, list[float]] = {"unflagged": [], "flagged imprecise": []}
        unreported: dict[str, int] = {}
        for r in rows:
            if _clock(r) != clock:
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
                print(f"{clock} clock, {label}: {sum(e <= 0.10 for e in sub)}/{len(sub)} honest scores within 10% "
                      f"of the true speedup, median |error| {100 * statistics.median(sub):.1f}%, "
                      f"max {100 * max(sub):.1f}%")
        if unreported:
            print(f"{clock} clock, not reported (unmeasurable): {sum(unreported.values())} scores ("
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
    _targets(rows)
    unusable = [r for r in rows if "unusable" in r]
    wrong = [(r["problem"], k) for r in rows if "unusable" not in r for k in ("reference", "slow")
             if r[k]["verdict"] != "OK"]
    print(f"{len(rows)} sessions: {len(unusable)} unusable (the suite's own reference fails here); "
          f"honest controls not scored OK: {wrong or 'none'}")
    contradicted = [(r["problem"], k) for r in rows if "unusable" not in r for k in ("reference", "slow")
                    if CONTRADICTED in r[k]["flags"]]
    if any(_clock(r) in DETERMINISTIC for r in rows):
        print(f"honest controls flagged {CONTRADICTED}: {contradicted or 'none'}")
    secs = [r["seconds"] for r in rows if "seconds" in r]
    if secs:
        print(f"session time: median {statistics.median(secs):.0f} s, max {max(secs):.0f} s, sum {sum(secs):.0f} s")


def _native_truths(rows: list[dict]) -> None:
    """A counted session's slow control is judged against its true CPU-time speedup: the driver's
    per-call clock in a session of the same problem under the cpu clock (an A/B arm), not the same
    clock read under valgrind, whose emulation prices memory unlike the machine."""
    native = {(r["suite"], r["problem"], r["model"]): r["slow_true"] for r in rows
              if "unusable" not in r and _clock(r) == r["clock"] and r.get("slow_true")}
    for r in rows:
        truth = native.get((r["suite"], r["problem"], r["model"]))
        if "unusable" not in r and _clock(r) in DETERMINISTIC and truth and not r.get("slow_true_valgrind"):
            r["slow_true_valgrind"], r["slow_true"] = r["slow_true"], truth
            r["err_slow"] = _err(r["slow"]["speedup"], truth) if r["slow"]["verdict"] == "OK" else None


def _clock(row: dict) -> str:
    """What measured a session's runs: its count, or the problem's own clock (cpu, wall)."""
    return row.get("measure_clock") or row["clock"]


def _targets(rows: list[dict]) -> None:
    """The busy-host target's two figures over every honest control scored OK: the share withheld
    (unmeasurable) and how many reported scores lie within 10% of their truth."""
    scored = [(r[k], r.get(f"err_{k}")) for r in rows if "unusable" not in r for k in ("reference", "slow")
              if r[k]["verdict"] == "OK"]
    if not scored:
        return
    withheld = sum("unmeasurable" in sc["flags"] for sc, _ in scored)
    reported = [abs(e) for sc, e in scored if "unmeasurable" not in sc["flags"] and e is not None]
    print(f"target: withheld {withheld}/{len(scored)} honest scores ({100 * withheld / len(scored):.0f}%; "
          f"target <= 15%); reported within 10% of the truth: {sum(e <= 0.10 for e in reported)}/{len(reported)} "
          "(target: all)")


# the contest protocol's self-score: a CPU-bound program (~0.1-0.3 s) as its own baseline, truth 1.0
SELF_PROGRAM = ("#include <cstdio>\nint main(){ long n; if(scanf(\"%ld\",&n)!=1) return 1; unsigned long s=0; "
                "for(long i=0;i<n;i++) s+=(unsigned long)(i*i%1000003); printf(\"%lu\\n\", s); return 0; }\n")


def contest_self(trials: int, n: int = 30_000_000) -> list[dict]:
    """The contest protocol (measure/contest.py, its default settings) scoring its baseline against
    itself ``trials`` times; each trial's speedup, error estimate, rounds, flags and load."""
    task = ContestProblem("self", [TestCase(f"{n}\n", None)], Limits(time_s=20.0, memory_mb=256),
                          [(SELF_PROGRAM, None)], "cpp", "self")
    out = []
    with Sandbox(workers=1) as sb:
        for i in range(trials):
            score, _ = score_contest(sb, task, SELF_PROGRAM, ContestSettings())
            out.append({"speedup": score.speedup, "rel_se": score.rel_se, "rounds": score.rounds,
                        "flags": score.flags, "load": round(os.getloadavg()[0], 2)})
            print(f"contest self-score {i}: {score.speedup} (rel_se {score.rel_se}, {score.rounds} rounds) "
                  f"{score.flags} load {out[-1]['load']:.1f}", flush=True)
    xs = [t["speedup"] for t in out if t["speedup"]]
    if xs:
        worst = max(abs(x - 1) for x in xs)
        print(f"contest self-score over {len(xs)} trials: median {statistics.median(xs):.3f}, range "
              f"[{min(xs):.3f}, {max(xs):.3f}], max |error| {100 * worst:.1f}% (target: within 10%)")
    return out


def _per_arm(rows: list[dict], fn) -> bool:
    """``fn`` on each arm's rows of an A/B run (rows that carry an ``arm``); False for one arm."""
    arms = sorted({r["arm"] for r in rows if r.get("arm")})
    for arm in arms if len(arms) > 1 else ():
        print(f"--- {arm}")
        fn([r for r in rows if r.get("arm") == arm])
    return len(arms) > 1


def replay(rows: list[dict], gate: NoiseGate = NoiseGate()) -> None:
    """An offline what-if on recorded sessions (CPU clock): each score re-judged from its
    recorded round clocks by the harness's rule (medians of runs, each minus the median null run;
    the shift check) and by a paired one (the median of the per-round ratios, its error from
    their log spread), both adding rounds from 3, two at a time, while an error is above the
    target, as far as the recording goes; and by the harness's live rule (``hybrid``: the
    medians' estimate where the gate takes it, else the paired mean of log ratios). Prints the
    share withheld and the reported errors."""
    if _per_arm(rows, replay):
        return
    for how in ("medians", "paired", "hybrid"):
        withheld, errors = 0, []
        for r in rows:
            rc = r.get("round_clocks")
            if not rc or "unusable" in r or _clock(r) != "cpu":
                continue
            labels = [k for k in ("reference", "slow") if r[k]["verdict"] == "OK"]
            if r.get("overhead_ratio", 0) > ProbeSettings.max_overhead_ratio:
                withheld += len(labels)  # measurable=False at calibration: the same under both rules
                continue
            n = 3
            while True:
                est = {k: _judged(rc[:n], k, how) for k in labels}
                if n >= len(rc) or not any(se > gate.target_rel_se or gap > gate.target_rel_se
                                           for _, se, gap in est.values()):
                    break
                n += 2
            for k, (speedup, se, gap) in est.items():
                truth = 1.0 if k == "reference" else r.get("slow_true")
                if speedup is None or se > gate.max_rel_se or gap > gate.max_rel_se:
                    withheld += 1
                elif truth:
                    errors.append(abs(speedup / truth - 1))
        total = withheld + len(errors)
        print(f"{how:8}: {withheld}/{total} honest scores withheld; reported within 10% of the truth: "
              f"{sum(e <= 0.1 for e in errors)}/{len(errors)}, max |error| {100 * max(errors, default=0):.1f}%")


def _judged(rounds: list[dict], label: str, how: str) -> tuple[float | None, float, float]:
    """(speedup, its relative standard error, the gap between its two estimates) by one rule."""
    clocks = {k: [r[k] for r in rounds] for k in ("__null__", "__reference__", label)}
    pairs = [(r["__reference__"] - r["__null__"], r[label] - r["__null__"]) for r in rounds]
    if how == "paired":
        logs = [math.log(b / c) for b, c in pairs if b > 0 and c > 0]
        if len(logs) < 2:
            return None, math.inf, 0.0
        return math.exp(statistics.median(logs)), MEDIAN_EFFICIENCY * spread(logs) / math.sqrt(len(logs)), 0.0
    if how == "hybrid":
        e = hybrid(Estimate(*_judged(rounds, label, "medians")), pairs, NoiseGate())
        return e.speedup, e.rel_se if e.rel_se is not None else math.inf, e.gap
    null = statistics.median(clocks["__null__"])
    b, c = statistics.median(clocks["__reference__"]) - null, statistics.median(clocks[label]) - null
    se = combined_rel_se(rel_se_of_cost(clocks[label], clocks["__null__"]),
                         rel_se_of_cost(clocks["__reference__"], clocks["__null__"]))
    return (b / c if b > 0 and c > 0 else None), (se if se is not None else math.inf), shift(pairs, b, c)


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
    ap.add_argument("--problem-size", default="reduced", choices=("reduced", "full"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--ab", default=None, metavar="FIELD=V1,V2",
                    help="an A/B of one ProbeSettings field (e.g. target_s=0.3,1.0): every session runs once "
                         "at each value, in a fresh random order per problem")
    ap.add_argument("--busy", type=int, default=0,
                    help="start this many CPU-bound processes beside the sweep (a busy workstation); "
                         "each record keeps the load average measured after its session")
    ap.add_argument("--contest-self", type=int, default=0, metavar="N",
                    help="after the sweep, beside the same --busy load: the contest protocol scores a C++ "
                         "program against itself N times (truth 1.0); with --json, written to JSON.contest.json")
    ap.add_argument("--json", default=None, help="also write every record here")
    ap.add_argument("--resume", action="store_true",
                    help="keep the records already in --json and run only the sessions it lacks")
    ap.add_argument("--summarize", default=None, metavar="JSON", help="only print the summary of an earlier --json")
    ap.add_argument("--replay", default=None, metavar="JSON",
                    help="re-judge an earlier --json's recorded rounds by the harness's rule and a paired one")
    args = ap.parse_args()
    for option, fn in (("summarize", summarize), ("replay", replay)):
        path = getattr(args, option)
        if path:
            if not Path(path).is_file():
                ap.error(f"--{option} {path}: no such file (write one with --json)")
            fn(json.loads(Path(path).read_text()))
            return 0

    pe, pb = ParEvalCheckout(args.pareval_dir), PolyBenchCheckout(args.polybench_dir)
    # named problems/kernels ("" = none) win over --all, so one suite can be swept alone
    problems = args.problems.split(",") if args.problems is not None else pe.names() if args.all else DEFAULT_PAREVAL
    kernels = args.kernels.split(",") if args.kernels is not None else pb.names() if args.all else DEFAULT_POLYBENCH
    work = [("pareval", n, m) for m in args.models.split(",") for n in problems if n] + \
           [("polybench", k, "serial") for k in kernels if k]
    field, _, values = (args.ab or "").partition("=")
    if args.ab and (field not in ProbeSettings.__dataclass_fields__ or not values):
        ap.error(f"--ab {args.ab}: give FIELD=V1,V2 with a ProbeSettings field")
    kind = type(getattr(ProbeSettings(), field)) if args.ab else str
    arms = [f"{field}={kind(v)}" for v in values.split(",")] if args.ab else [""]
    rows = []
    if args.resume:
        if not args.json:
            ap.error("--resume needs --json (the records to keep)")
        if Path(args.json).is_file():
            try:
                rows = json.loads(Path(args.json).read_text())
            except ValueError as e:
                ap.error(f"--resume: {args.json} is not a record this script wrote ({e})")
    done = {(r["suite"], r["problem"], r["model"], r.get("arm", "")) for r in rows}
    print(f"{'suite':9} {'problem':40} {'model':6} {'clock':5} {'calls':>5} {'ref':>6} {'slow':>6} "
          f"{'slow true':>9} {'err ref':>8} {'err slow':>8} {'s':>5}", flush=True)
    t_all = time.time()
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    print(f"load average at the start: {os.getloadavg()[0]:.1f} ({args.busy} busy processes started)", flush=True)
    selfs = []
    try:
        _sweep(args, work, arms, field, kind, rows, done, pe, pb)
        selfs = contest_self(args.contest_self) if args.contest_self > 0 else []
        _save(args.json and args.json + ".contest.json" if selfs else None, selfs)
    finally:
        for proc in burners:
            proc.kill()
    print()
    summarize(rows)
    loads = [r["load"] for r in rows + selfs if "load" in r]
    if loads:
        print(f"load average after each session: min {min(loads):.1f} median {statistics.median(loads):.1f} "
              f"max {max(loads):.1f} ({args.busy} busy processes of ours, {os.cpu_count()} CPUs)")
    print(f"{time.time() - t_all:.0f} s")
    return 0


def _sweep(args, work, arms, field, kind, rows, done, pe, pb) -> None:
    order = random.Random(0)
    with Sandbox(workers=1) as sb:
        for suite, name, model, arm in ((*w, a) for w in work for a in order.sample(arms, len(arms))):
            if (suite, name, model, arm) in done:
                continue
            settings = ProbeSettings(repeats=args.repeats, **({field: kind(arm.split("=", 1)[1])} if arm else {}))
            t0 = time.time()
            try:
                p = (pe.problem(name, model, args.problem_size, threads=args.threads, ranks=args.ranks)
                     if suite == "pareval" else pb.problem(name, args.problem_size))
                scores, info = score_problem(sb, p, {"reference": p.reference, "slow": p.slow}, settings)
            except ProblemUnusable as e:
                rows.append({"suite": suite, "problem": name, "model": model, "arm": arm, "unusable": str(e)[:300]})
                _save(args.json, rows)
                print(f"{suite:9} {name:40} {model:6} UNUSABLE: {str(e)[:150]}", flush=True)
                continue
            ref, slow = scores["reference"], scores["slow"]
            truth = (slow.inprocess_baseline_s / slow.inprocess_runtime_s
                     if slow.inprocess_runtime_s and slow.inprocess_baseline_s else None)
            row = {"suite": suite, "problem": name, "model": model, "arm": arm, "clock": p.clock,
                   "measure_clock": info.get("measure_clock"), "calls": info.get("calls"),
                   "overhead_ratio": info.get("overhead_ratio"), "reference_rel_se": info.get("reference_rel_se"),
                   "round_clocks": info.get("round_clocks"), "round_native_s": info.get("round_native_s"),
                   "flags": sorted(set(ref.flags) | set(slow.flags)),
                   "reference": ref.to_dict(), "slow": slow.to_dict(), "slow_true": truth,
                   "err_reference": _err(ref.speedup, 1.0) if ref.verdict == "OK" else None,
                   "err_slow": _err(slow.speedup, truth) if slow.verdict == "OK" else None,
                   "seconds": round(time.time() - t0, 1), "load": round(os.getloadavg()[0], 2)}
            rows.append(row)
            _save(args.json, rows)
            def f(v, d=2):
                return "—" if v is None else f"{v:.{d}f}"

            verdicts = "" if ref.verdict == slow.verdict == "OK" else f" {ref.verdict}/{slow.verdict}"
            verdicts += "".join(f" [{f}]" for f in row["flags"] if f in ("imprecise_timing", "unmeasurable"))
            print(f"{suite:9} {name:40} {model:6} {_clock(row)[:5]:5} {row['calls']:>5} "
                  + (f"{arm} " if arm else "") +
                  f"{f(ref.speedup):>6} {f(slow.speedup):>6} "
                  f"{f(truth):>9} {f(row['err_reference'] and 100 * row['err_reference'], 1):>7}% "
                  f"{f(row['err_slow'] and 100 * row['err_slow'], 1):>7}% {row['seconds']:>5}{verdicts}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
