"""Deterministic clock benchmark (sandbox/clock.py, docs/sandbox.md).

(a) slowdown vs native per language: CPU time of a C++ and a Python 3 program under the
    instructions and cycles clocks over its CPU time under the cpu clock (same sandbox, same run);
(b) determinism under load: CV of the instruction count and of the CPU time over 10 runs each
    while busy-loop processes load every core (expected: instruction CV exactly 0);
(c) validation on the bundled CodeContests sample: per problem and language, Spearman and Kendall
    correlation of instructions and of cycles against the median native CPU time (5 repeats) of
    the correct solutions on the problem's largest test; the known (faster, slower) pairs of
    known_order.json ordered; the cases where a clock disagrees with the CPU time;
(d) the cycles-weight fit: non-negative least squares of the native median CPU time against
    (instructions, L1 misses, LL misses, 1) over every solution of (c); the weights in
    instruction units go to sandbox/clock.py's CYCLE_WEIGHTS.

    .venv/bin/python benchmarks/clock_bench.py [--problems 30] [--py-problems 6] [--workers 2]

The same validation on the real suites (ParEval serial, PolyBench), the withheld share of honest
scores with cycles against cpu and the build's throughput per clock: benchmarks/clock_validation.py.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats  # noqa: E402

from benchmarks.sandbox_bench import WORK_CPP  # noqa: E402
from perfalign.perfdata.codecontests import iter_problems  # noqa: E402
from perfalign.perfdata.records import Problem  # noqa: E402
from perfalign.sandbox import Job, Limits, Sandbox, TestCase  # noqa: E402
from perfalign.sandbox import clock as clk  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "codecontests_sample"
LANG_EXT = {"cpp": ".cpp", "python3": ".py"}
WORK_PY = "s=0\nfor i in range(300000): s+=i*i%7\nprint(s)\n"


def _rank_correlation(test, a: list[float], b: list[float]) -> float:
    """scipy's statistic; NaN where it is undefined (a constant list), without scipy's warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(test(a, b).statistic)


def spearman(a: list[float], b: list[float]) -> float:
    """Pearson correlation of the ranks (ties share the mean rank)."""
    return _rank_correlation(stats.spearmanr, a, b)


def kendall(a: list[float], b: list[float]) -> float:
    """Kendall's tau-b: (concordant - discordant) pairs over the pairs untied in each list."""
    return _rank_correlation(stats.kendalltau, a, b)


def cv(xs: list[float]) -> float:
    return statistics.pstdev(xs) / statistics.fmean(xs) if xs and statistics.fmean(xs) else float("nan")


def _burn() -> None:  # a busy loop: the machine's load in (b)
    while True:
        pass


def run(sb: Sandbox, src: str, lang: str, clock: str, tc: TestCase, repeats: int = 1, time_s: float = 10.0):
    return sb.run_job(Job(src, lang, [tc], Limits(time_s=time_s, memory_mb=512), repeats=repeats, clock=clock))


def slowdown(sb: Sandbox) -> dict:
    out = {}
    for lang, src in (("cpp", WORK_CPP), ("python3", WORK_PY)):
        row = {}
        native = run(sb, src, lang, "cpu", TestCase(), repeats=5)
        row["native_cpu_s"] = native.tests[0].cpu_time_s
        for clock in clk.DETERMINISTIC:
            r = run(sb, src, lang, clock, TestCase(), repeats=2)
            assert r.ok, (lang, clock, r.verdict, r.tests[0].message if r.tests else r.message)
            row[f"{clock}_cpu_s"] = r.tests[0].cpu_time_s
            row[f"{clock}_slowdown"] = r.tests[0].cpu_time_s / row["native_cpu_s"]
        # start-up alone (an empty program), so the slowdown of the work itself can be told apart
        empty = "int main(){}" if lang == "cpp" else "pass\n"
        e_nat = run(sb, empty, lang, "cpu", TestCase(), repeats=3).tests[0].cpu_time_s
        e_vg = run(sb, empty, lang, "instructions", TestCase(), repeats=2).tests[0].cpu_time_s
        row["startup_native_s"], row["startup_instructions_s"] = e_nat, e_vg
        work_native = max(row["native_cpu_s"] - e_nat, 1e-9)
        row["instructions_slowdown_of_work"] = (row["instructions_cpu_s"] - e_vg) / work_native
        out[lang] = row
    return out


def determinism(sb: Sandbox, runs: int = 10) -> dict:
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(os.cpu_count() or 2)]
    for p in burners:
        p.start()
    try:
        out = {}
        for lang, src in (("cpp", WORK_CPP), ("python3", WORK_PY)):
            r = run(sb, src, lang, "instructions", TestCase(), repeats=runs)
            c = run(sb, src, lang, "cpu", TestCase(), repeats=runs)
            ins = r.tests[0].instructions_runs
            out[lang] = {"runs": runs, "instructions_cv": cv(ins), "distinct_counts": len(set(ins)),
                         "cpu_time_cv": cv(c.tests[0].cpu_times_s), "load_processes": len(burners)}
        return out
    finally:
        for p in burners:
            p.terminate()
            p.join()


def _solution_files(problem_dir: Path, lang: str) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((problem_dir / "solutions").glob(f"correct_*{LANG_EXT[lang]}"))}


def validate(sb: Sandbox, n_problems: int, n_py: int, workers: int) -> dict:
    problems: dict[str, Problem] = {p.name: p for p in iter_problems(str(SAMPLE / "data")) if isinstance(p, Problem)}
    known = json.loads((SAMPLE / "known_order.json").read_text())
    dirs = sorted(d for d in (SAMPLE / "problems").iterdir() if d.is_dir())[:n_problems]
    jobs, meta = [], []
    for k, d in enumerate(dirs):
        name = json.loads((d / "meta.json").read_text())["name"]
        p = problems[name]
        big = max(range(len(p.tests)), key=lambda i: len(p.tests[i].input))
        tc = TestCase(p.tests[big].input, p.tests[big].expected)
        for lang in ("cpp", "python3"):
            if lang == "python3" and k >= n_py:
                continue
            for fname, src in _solution_files(d, lang).items():
                for clock, reps in (("cpu", 5), ("cycles", 1)):
                    jobs.append(Job(src, lang, [tc], Limits(time_s=p.time_limit_s, memory_mb=p.memory_limit_mb),
                                    repeats=reps, clock=clock))
                    meta.append((name, lang, fname, clock))
    rows: dict[tuple[str, str, str], dict] = {}
    t0 = time.monotonic()
    for done, (i, r) in enumerate(sb.run_many(jobs, workers=workers), start=1):
        if done % 20 == 0:
            print(f"    ... {done}/{len(jobs)} runs, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        name, lang, fname, clock = meta[i]
        row = rows.setdefault((name, lang, fname), {})
        t = r.tests[0] if r.tests else None
        row[f"{clock}_ok"] = r.ok
        if clock == "cpu" and t:
            row["cpu_s"] = t.cpu_time_s
        elif t:
            row.update(instructions=t.instructions, cycles=t.cycles, l1=t.l1_misses, ll=t.ll_misses)
    good = {k: v for k, v in rows.items() if v.get("cpu_ok") and v.get("cycles_ok") and v.get("instructions")}
    per_problem = []
    disagreements = []
    for name in sorted({k[0] for k in good}):
        for lang in ("cpp", "python3"):
            sols = {k[2]: v for k, v in good.items() if k[0] == name and k[1] == lang}
            if len(sols) < 2:
                continue
            files = sorted(sols)
            cpu = [sols[f]["cpu_s"] for f in files]
            entry = {"problem": name, "lang": lang, "n": len(files)}
            for clock in ("instructions", "cycles"):
                xs = [float(sols[f][clock]) for f in files]
                entry[f"spearman_{clock}"] = spearman(xs, cpu)
                entry[f"kendall_{clock}"] = kendall(xs, cpu)
                # clear disagreements: CPU time differs >= 1.5x, the clock says the opposite
                for i in range(len(files)):
                    for j in range(len(files)):
                        if cpu[i] >= 1.5 * cpu[j] and xs[i] < xs[j]:
                            disagreements.append({"problem": name, "clock": clock, "slower_by_cpu": files[i],
                                                  "faster_by_cpu": files[j], "cpu_ratio": round(cpu[i] / cpu[j], 2),
                                                  "clock_ratio": round(xs[i] / xs[j], 3)})
            per_problem.append(entry)
    pairs = {"instructions": [0, 0], "cycles": [0, 0], "cpu": [0, 0]}
    for name, info in known.items():
        for fast, slow in info.get("known_faster_files", []):
            lang = "cpp" if fast.endswith(".cpp") else "python3" if fast.endswith(".py") else None
            a, b = good.get((name, lang, fast)), good.get((name, lang, slow))
            if not (a and b):
                continue
            for clock, key in (("instructions", "instructions"), ("cycles", "cycles"), ("cpu", "cpu_s")):
                pairs[clock][0] += a[key] < b[key]
                pairs[clock][1] += 1
    return {"rows": good, "per_problem": per_problem, "disagreements": disagreements, "known_pairs": pairs,
            "failed": sorted(f"{k[0]} {k[2]}" for k, v in rows.items() if k not in good)}


def fit_weights(rows: dict) -> dict:
    """Non-negative least squares of native CPU time on (Ir, L1 misses, LL misses, 1), each row
    divided by its CPU time (relative errors: a 2 ms and a 200 ms solution weigh the same, and the
    start-up noise of the many short runs does not swamp the fit); weights in instruction units."""
    import numpy as np
    from scipy.optimize import nnls

    cpp = [v for k, v in rows.items() if k[1] == "cpp" and v.get("l1") is not None]
    a = np.array([[v["instructions"], v["l1"], v["ll"], 1.0] for v in cpp], dtype=float)
    y = np.array([v["cpu_s"] for v in cpp])
    scale = a.max(axis=0)
    coef, _ = nnls(a / scale / y[:, None], np.ones_like(y))
    coef = coef / scale
    pred = a @ coef
    r2 = 1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    w = {"L1": coef[1] / coef[0] if coef[0] else float("nan"), "LL": coef[2] / coef[0] if coef[0] else float("nan")}
    return {"n": len(cpp), "ns_per_instruction": coef[0] * 1e9, "intercept_s": coef[3], "r2": r2, "weights": w,
            "median_rel_error": float(np.median(np.abs(pred - y) / y))}


def refit_correlation(v: dict, weights: dict) -> dict:
    """Per-problem Spearman/Kendall of cycles recomputed with ``weights`` (C++), against CPU time."""
    sp, kd = [], []
    for name in sorted({k[0] for k in v["rows"]}):
        sols = [r for k, r in v["rows"].items() if k[0] == name and k[1] == "cpp" and r.get("l1") is not None]
        if len(sols) < 2:
            continue
        xs = [r["instructions"] + weights["L1"] * r["l1"] + weights["LL"] * r["ll"] for r in sols]
        cpu = [r["cpu_s"] for r in sols]
        sp.append(spearman(xs, cpu))
        kd.append(kendall(xs, cpu))
    sp = [x for x in sp if not math.isnan(x)]
    kd = [x for x in kd if not math.isnan(x)]
    return {"spearman_mean": statistics.fmean(sp), "kendall_mean": statistics.fmean(kd), "problems": len(sp)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=30)
    ap.add_argument("--py-problems", type=int, default=6, help="problems whose Python solutions are measured too")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--save", default="", help="write the validation rows and the fit to this JSON file")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: slowdown,determinism,validate")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    t0 = time.monotonic()
    with Sandbox(backend="bwrap", workers=args.workers, calibrate=False) as sb:
        print(f"clock bench: valgrind {clk.VALGRIND}, cycles weights now {clk.CYCLE_WEIGHTS}, "
              f"slowdown allowance {clk.SLOWDOWN} + {clk.STARTUP_S} s")
        if "slowdown" not in skip:
            print("\n(a) slowdown vs native (CPU time under the clock / under cpu, one program per language)")
            for lang, row in slowdown(sb).items():
                print(f"  {lang:8s} native {row['native_cpu_s']:.3f} s | "
                      f"instructions {row['instructions_cpu_s']:.2f} s "
                      f"= {row['instructions_slowdown']:.1f}x | cycles {row['cycles_cpu_s']:.2f} s = "
                      f"{row['cycles_slowdown']:.1f}x | start-up native {row['startup_native_s']:.3f} s, under "
                      f"valgrind {row['startup_instructions_s']:.2f} s | work alone (instructions) "
                      f"{row['instructions_slowdown_of_work']:.1f}x")
        if "determinism" not in skip:
            print("\n(b) determinism under load (10 runs each, a busy loop per core running meanwhile)")
            for lang, row in determinism(sb).items():
                print(f"  {lang:8s} instructions CV {row['instructions_cv']:.2e} ({row['distinct_counts']} distinct "
                      f"count(s)) | CPU time CV {row['cpu_time_cv'] * 100:.2f}% | {row['load_processes']} burners")
        if "validate" not in skip:
            print(f"\n(c) validation: CodeContests sample, {args.problems} problems (Python on {args.py_problems}), "
                  "largest test, native median of 5 vs one counted run")
            v = validate(sb, args.problems, args.py_problems, args.workers)
            for lang in ("cpp", "python3"):
                pp = [e for e in v["per_problem"] if e["lang"] == lang]
                if not pp:
                    continue
                for clock in ("instructions", "cycles"):
                    sp = [e[f"spearman_{clock}"] for e in pp if not math.isnan(e[f"spearman_{clock}"])]
                    kd = [e[f"kendall_{clock}"] for e in pp if not math.isnan(e[f"kendall_{clock}"])]
                    print(f"  {lang:8s} {clock:12s} per-problem Spearman mean {statistics.fmean(sp):.3f} "
                          f"median {statistics.median(sp):.3f} | Kendall mean {statistics.fmean(kd):.3f} "
                          f"median {statistics.median(kd):.3f} | {len(pp)} problems, "
                          f"{sum(e['n'] for e in pp)} solutions")
            for clock, (right, n) in v["known_pairs"].items():
                print(f"  known (faster, slower) pairs ordered by {clock}: {right}/{n}")
            print(f"  clear disagreements (CPU >= 1.5x apart, the clock says the opposite): {len(v['disagreements'])}")
            for d in v["disagreements"][:12]:
                print(f"    {d}")
            if v["failed"]:
                print(f"  not counted (failed a run): {v['failed']}")
            print("\n(d) cycles-weight fit (C++ solutions of (c); NNLS, native CPU time ~ a*Ir + b*L1 + c*LL + d)")
            f = fit_weights(v["rows"])
            print(f"  n={f['n']} R^2={f['r2']:.3f} median relative error {f['median_rel_error'] * 100:.1f}% "
                  f"a={f['ns_per_instruction']:.3f} ns/instruction d={f['intercept_s'] * 1e3:.2f} ms | "
                  f"weights (instruction units): L1 {f['weights']['L1']:.2f}, LL {f['weights']['LL']:.2f}")
            if all(math.isfinite(x) for x in f["weights"].values()):
                c = refit_correlation(v, f["weights"])
                print(f"  cycles with the fitted weights: per-problem Spearman mean {c['spearman_mean']:.3f}, "
                      f"Kendall mean {c['kendall_mean']:.3f} ({c['problems']} problems, C++)")
            if args.save:
                Path(args.save).write_text(json.dumps({"fit": f, "rows": [dict(zip(("problem", "lang", "file"), k), **r)
                                                                           for k, r in v["rows"].items()]}, indent=1))
    print(f"\ntotal {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
