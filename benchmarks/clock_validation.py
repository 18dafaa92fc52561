"""Deterministic clock on the real suites: ParEval serial and PolyBench/C.

Per problem, several candidates whose speeds differ: the suite's ``reference``, its known ~2x
``slow`` control (the reference's work done twice) and 1-3 variants written here (VARIANTS: a
loop order that walks memory with a stride, an extra pass, a leaner loop), every one of them
correct. Each problem is scored by the probe harness (measure/harness.py, one session per clock)
under ``clock=cpu`` and ``clock=cycles``; a cycles run also reports valgrind's instruction count,
so one counted session gives both deterministic clocks. Per candidate, per call:
(median of its runs - median of the null runs) / calls, from the session's own runs.

Reported:
(1) per problem, Spearman and Kendall correlation of instructions and of cycles with the median
    CPU time; the known (reference, slow) pairs ordered; the cases where a clock disagrees with
    the CPU time (every candidate's ratio to the reference under each clock);
(2) the share of honest scores (all candidates here are correct) reported vs withheld
    (``unmeasurable``: speedup None) under cycles against cpu, same problems and candidates;
(3) with ``--build CLOCK:REPEATS,...``: the CodeContests-Perf build's throughput per clock, each
    a fresh ``perfalign perf build --clock CLOCK`` on the first ``--build-problems`` problems of
    the bundled sample (``--build-tests`` tests each); programs measured per minute of the build's
    own wall time (its summary's ``wall_seconds``; the CLI's start-up is reported apart).

    nice -n 10 .venv/bin/python benchmarks/clock_validation.py [--suites pareval,polybench]
        [--problems NAME,...] [--out docs/measurements/clock_validation.json]
    nice -n 10 .venv/bin/python benchmarks/clock_validation.py --report-only \
        --build cpu:3,instructions:1,cycles:1 [--build-problems 3 --build-tests 2 --workers 1]

Results accumulate in the JSON (one entry per problem and clock); a problem already there is not
measured again (``--redo`` measures it again), so the sweep can run in pieces of a few minutes
(``--budget-s``), and the cpu and cycles sessions can run side by side into two files
(``--clocks cycles --out OTHER.json``) joined with ``--merge OTHER.json``. The figures and the
commands that produced them: docs/sandbox.md, "Deterministic clock", (e)-(g).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.clock_bench import kendall, spearman  # noqa: E402
from perfalign.measure.harness import ProbeSession, ProbeSettings  # noqa: E402
from perfalign.sandbox import Sandbox  # noqa: E402
from perfalign.sandbox import clock as clk  # noqa: E402

# the suites' checkouts beside the repository (or beside the worktrees' folder)
SHARED = next((d / "shared" / "external" for d in (ROOT.parent, ROOT.parents[1])
               if (d / "shared" / "external").is_dir()), ROOT.parent / "shared" / "external")
OUT = ROOT / "docs" / "measurements" / "clock_validation.json"

# Candidate variants (all correct: the same floating-point operations in the same order per
# output element, only the traversal or the amount of work changes); "@SIG" is the problem's
# signature (ProbeProblem.signature).
VARIANTS: dict[tuple[str, str], dict[str, str]] = {
    ("pareval", "02_dense_la_gemm"): {
        "ijk_strided_B": """@SIG {
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < N; j++)
      for (size_t k = 0; k < K; k++)
        C[i*N + j] += A[i*K + k] * B[k*N + j];
}""",
        "jki_strided_AC": """@SIG {
  for (size_t j = 0; j < N; j++)
    for (size_t k = 0; k < K; k++)
      for (size_t i = 0; i < M; i++)
        C[i*N + j] += A[i*K + k] * B[k*N + j];
}""",
    },
    ("pareval", "04_dense_la_gemv"): {
        "column_order": """@SIG {
  for (size_t i = 0; i < M; i++) y[i] = 0;
  for (size_t j = 0; j < N; j++)
    for (size_t i = 0; i < M; i++)
      y[i] += A[i * N + j] * x[j];
}""",
        "temp_then_copy": """@SIG {
  std::vector<double> t(M, 0.0);
  for (size_t i = 0; i < M; i++) {
    double s = 0;
    for (size_t j = 0; j < N; j++) s += A[i * N + j] * x[j];
    t[i] = s;
  }
  for (size_t i = 0; i < M; i++) y[i] = t[i];
}""",
    },
    ("pareval", "03_dense_la_axpy"): {
        "strided_order": """@SIG {
  const size_t n = x.size(), s = 64;
  for (size_t o = 0; o < s; o++)
    for (size_t i = o; i < n; i += s) z[i] = alpha*x[i] + y[i];
}""",
        "two_passes": """@SIG {
  for (size_t i = 0; i < x.size(); i++) z[i] = alpha*x[i];
  for (size_t i = 0; i < x.size(); i++) z[i] += y[i];
}""",
    },
    ("pareval", "53_stencil_2d_jacobi_5-point_stencil"): {
        "column_order": """@SIG {
  for (size_t j = 0; j < N; j++)
    for (size_t i = 0; i < N; i++) {
      double sum = 0;
      if (i > 0) sum += input[(i - 1) * N + j];
      if (i < N - 1) sum += input[(i + 1) * N + j];
      if (j > 0) sum += input[i * N + (j - 1)];
      if (j < N - 1) sum += input[i * N + (j + 1)];
      sum += input[i * N + j];
      output[i * N + j] = sum / 5.0;
    }
}""",
        "two_passes": """@SIG {
  std::vector<double> t(N * N, 0.0);
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < N; j++) {
      double sum = 0;
      if (i > 0) sum += input[(i - 1) * N + j];
      if (i < N - 1) sum += input[(i + 1) * N + j];
      if (j > 0) sum += input[i * N + (j - 1)];
      if (j < N - 1) sum += input[i * N + (j + 1)];
      sum += input[i * N + j];
      t[i * N + j] = sum / 5.0;
    }
  for (size_t k = 0; k < N * N; k++) output[k] = t[k];
}""",
    },
    ("pareval", "30_scan_prefix_sum"): {
        "plain_loop": """@SIG {
  double s = 0;
  for (size_t i = 0; i < x.size(); i++) { s += x[i]; output[i] = s; }
}""",
        "copy_then_scan": """@SIG {
  for (size_t i = 0; i < x.size(); i++) output[i] = x[i];
  for (size_t i = 1; i < x.size(); i++) output[i] += output[i - 1];
}""",
    },
    ("pareval", "55_transform_relu"): {
        "branchy": """@SIG {
  for (size_t i = 0; i < x.size(); i++) if (x[i] < 0) x[i] = 0.0;
}""",
        "temp_then_copy": """@SIG {
  std::vector<double> t(x.size());
  for (size_t i = 0; i < x.size(); i++) t[i] = std::max(0.0, x[i]);
  for (size_t i = 0; i < x.size(); i++) x[i] = t[i];
}""",
    },
    ("pareval", "20_histogram_pixel_histogram"): {
        "strided_order": """@SIG {
  const size_t n = image.size(), s = 64;
  for (size_t o = 0; o < s; o++)
    for (size_t i = o; i < n; i += s) bins[image[i]] += 1;
}""",
        "four_local_tables": """@SIG {
  size_t t[4][256] = {};
  size_t n = image.size(), i = 0;
  for (; i + 4 <= n; i += 4) { t[0][image[i]]++; t[1][image[i+1]]++; t[2][image[i+2]]++; t[3][image[i+3]]++; }
  for (; i < n; i++) t[0][image[i]]++;
  for (int b = 0; b < 256; b++) bins[b] += t[0][b] + t[1][b] + t[2][b] + t[3][b];
}""",
    },
    ("polybench", "gemm"): {
        "ijk_strided_B": """@SIG {
  for (int i = 0; i < _PB_NI; i++)
    for (int j = 0; j < _PB_NJ; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < _PB_NK; k++) C[i][j] += alpha * A[i][k] * B[k][j];
    }
}""",
        "k_outer": """@SIG {
  for (int i = 0; i < _PB_NI; i++)
    for (int j = 0; j < _PB_NJ; j++) C[i][j] *= beta;
  for (int k = 0; k < _PB_NK; k++)
    for (int i = 0; i < _PB_NI; i++)
      for (int j = 0; j < _PB_NJ; j++) C[i][j] += alpha * A[i][k] * B[k][j];
}""",
    },
    ("polybench", "atax"): {
        "second_product_by_column": """@SIG {
  for (int i = 0; i < _PB_N; i++) y[i] = 0;
  for (int i = 0; i < _PB_M; i++) {
    tmp[i] = SCALAR_VAL(0.0);
    for (int j = 0; j < _PB_N; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
  }
  for (int j = 0; j < _PB_N; j++)
    for (int i = 0; i < _PB_M; i++) y[j] = y[j] + A[i][j] * tmp[i];
}""",
        "two_sweeps": """@SIG {
  for (int i = 0; i < _PB_N; i++) y[i] = 0;
  for (int i = 0; i < _PB_M; i++) {
    tmp[i] = SCALAR_VAL(0.0);
    for (int j = 0; j < _PB_N; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
  }
  for (int i = 0; i < _PB_M; i++)
    for (int j = 0; j < _PB_N; j++) y[j] = y[j] + A[i][j] * tmp[i];
}""",
    },
    ("polybench", "mvt"): {
        "both_by_row": """@SIG {
  for (int i = 0; i < _PB_N; i++)
    for (int j = 0; j < _PB_N; j++) x1[i] = x1[i] + A[i][j] * y_1[j];
  for (int j = 0; j < _PB_N; j++)
    for (int i = 0; i < _PB_N; i++) x2[i] = x2[i] + A[j][i] * y_2[j];
}""",
        "both_by_column": """@SIG {
  for (int j = 0; j < _PB_N; j++)
    for (int i = 0; i < _PB_N; i++) x1[i] = x1[i] + A[i][j] * y_1[j];
  for (int i = 0; i < _PB_N; i++)
    for (int j = 0; j < _PB_N; j++) x2[i] = x2[i] + A[j][i] * y_2[j];
}""",
    },
    ("polybench", "jacobi-2d"): {
        "column_order": """@SIG {
  for (int t = 0; t < _PB_TSTEPS; t++) {
    for (int j = 1; j < _PB_N - 1; j++)
      for (int i = 1; i < _PB_N - 1; i++)
        B[i][j] = SCALAR_VAL(0.2) * (A[i][j] + A[i][j-1] + A[i][1+j] + A[1+i][j] + A[i-1][j]);
    for (int j = 1; j < _PB_N - 1; j++)
      for (int i = 1; i < _PB_N - 1; i++)
        A[i][j] = SCALAR_VAL(0.2) * (B[i][j] + B[i][j-1] + B[i][1+j] + B[1+i][j] + B[i-1][j]);
  }
}""",
    },
    ("polybench", "syrk"): {
        "dot_products": """@SIG {
  for (int i = 0; i < _PB_N; i++)
    for (int j = 0; j <= i; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < _PB_M; k++) C[i][j] += alpha * A[i][k] * A[j][k];
    }
}""",
        "column_order": """@SIG {
  for (int j = 0; j < _PB_N; j++)
    for (int i = j; i < _PB_N; i++) {
      C[i][j] *= beta;
      for (int k = 0; k < _PB_M; k++) C[i][j] += alpha * A[i][k] * A[j][k];
    }
}""",
    },
    ("polybench", "2mm"): {
        "ikj": """@SIG {
  for (int i = 0; i < _PB_NI; i++) {
    for (int j = 0; j < _PB_NJ; j++) tmp[i][j] = SCALAR_VAL(0.0);
    for (int k = 0; k < _PB_NK; ++k)
      for (int j = 0; j < _PB_NJ; j++) tmp[i][j] += alpha * A[i][k] * B[k][j];
  }
  for (int i = 0; i < _PB_NI; i++) {
    for (int j = 0; j < _PB_NL; j++) D[i][j] *= beta;
    for (int k = 0; k < _PB_NJ; ++k)
      for (int j = 0; j < _PB_NL; j++) D[i][j] += tmp[i][k] * C[k][j];
  }
}""",
        "column_order": """@SIG {
  for (int j = 0; j < _PB_NJ; j++)
    for (int i = 0; i < _PB_NI; i++) {
      tmp[i][j] = SCALAR_VAL(0.0);
      for (int k = 0; k < _PB_NK; ++k) tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (int j = 0; j < _PB_NL; j++)
    for (int i = 0; i < _PB_NI; i++) {
      D[i][j] *= beta;
      for (int k = 0; k < _PB_NJ; ++k) D[i][j] += tmp[i][k] * C[k][j];
    }
}""",
    },
}
CLOCKS = ("cpu", "cycles")
PRECISE = 0.15  # problems whose CPU-time truth has every candidate's speedup within this relative error
METRICS = ("cpu_s", "instructions", "cycles", "l1_misses", "ll_misses")


class CountingSession(ProbeSession):
    """A probe session that also keeps every timed run's full counts (a cycles run carries the
    instruction count, L1 and LL misses beside the cycles the harness scores with)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.runs: dict[str, list[dict]] = {}  # program source -> the counts of its timed runs

    def run(self, code, mode, calls, seed, time_s):
        res = super().run(code, mode, calls, seed, time_s)
        if mode == "T" and calls == self.calls and res.ok and res.tests:
            t = res.tests[0]
            self.runs.setdefault(code, []).append({"cpu_s": t.cpu_time_s, "instructions": t.instructions,
                                                   "cycles": t.cycles, "l1_misses": t.l1_misses,
                                                   "ll_misses": t.ll_misses})
        return res


def load_problem(suite: str, name: str):
    if suite == "pareval":
        from perfalign.evaluation.tasks.pareval import ParEvalCheckout
        return ParEvalCheckout(SHARED / "pareval").problem(name, "serial")
    from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
    return PolyBenchCheckout(SHARED / "polybench").problem(name)


def per_call(session: CountingSession, code: str, metric: str) -> float | None:
    """(median of the program's runs - median of the null runs) / calls, for one metric."""
    mine = [r[metric] for r in session.runs.get(code, []) if r[metric] is not None]
    null = [r[metric] for r in session.runs.get(session.p.null(), []) if r[metric] is not None]
    if not mine or not null:
        return None
    return (statistics.median(mine) - statistics.median(null)) / session.calls


def measure(sb: Sandbox, suite: str, name: str, clock: str) -> dict:
    p = load_problem(suite, name)
    sig = p.signature.text()
    cands = {"reference": p.reference, "slow": p.slow,
             **{label: code.replace("@SIG", sig) for label, code in VARIANTS[(suite, name)].items()}}
    session = CountingSession(sb, p, ProbeSettings(clock=clock))
    t0 = time.monotonic()
    scores = session.score(cands)
    out = {"suite": suite, "problem": name, "clock": clock, "seconds": round(time.monotonic() - t0, 1),
           "calls": session.calls, "measure_clock": session.info.get("measure_clock"), "candidates": {}}
    metrics = ("cpu_s",) if clock == "cpu" else METRICS
    for label, s in scores.items():
        row = {"verdict": s.verdict, "correct": s.correct, "speedup": s.speedup, "raw_speedup": s.raw_speedup,
               "rel_se": s.rel_se, "flags": s.flags, "rounds": s.rounds, "message": s.message[:300]}
        if s.verdict == "OK":
            row.update({m: per_call(session, cands[label], m) for m in metrics})
        out["candidates"][label] = row
    return out


def load_results(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"measurements": []}


def _fmt(x: float | None, nd: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def analyse(results: dict) -> dict:
    by = {(m["suite"], m["problem"], m["clock"]): m for m in results["measurements"]}
    problems = sorted({(s, p) for s, p, _ in by})
    per_problem, cases, pairs = [], [], {"cpu": [0, 0], "instructions": [0, 0], "cycles": [0, 0]}
    for suite, name in problems:
        cpu, cyc = by.get((suite, name, "cpu")), by.get((suite, name, "cycles"))
        if not (cpu and cyc):
            continue
        labels = [lb for lb in cpu["candidates"] if cpu["candidates"][lb].get("cpu_s") is not None
                  and cyc["candidates"].get(lb, {}).get("instructions") is not None]
        t = {lb: cpu["candidates"][lb]["cpu_s"] for lb in labels}
        # how far the CPU-time "truth" itself can be trusted: the largest estimated relative
        # error of a candidate's speedup in the cpu session (this VM is shared and loaded)
        rse = [cpu["candidates"][lb]["rel_se"] for lb in labels if cpu["candidates"][lb]["rel_se"] is not None]
        entry = {"suite": suite, "problem": name, "n": len(labels), "ratios": {},
                 "cpu_max_rel_se": max(rse) if rse else None}
        for metric in ("instructions", "cycles"):
            xs = {lb: cyc["candidates"][lb][metric] for lb in labels}
            entry[f"spearman_{metric}"] = spearman([xs[lb] for lb in labels], [t[lb] for lb in labels])
            entry[f"kendall_{metric}"] = kendall([xs[lb] for lb in labels], [t[lb] for lb in labels])
            for i, a in enumerate(labels):  # a pair the clock orders against CPU time (>= 1.2x apart)
                for b in labels[i + 1:]:
                    if max(t[a], t[b]) >= 1.2 * min(t[a], t[b]) and (t[a] - t[b]) * (xs[a] - xs[b]) < 0:
                        cases.append({"suite": suite, "problem": name, "clock": metric, "a": a, "b": b,
                                      "cpu_ratio_a_over_b": round(t[a] / t[b], 3),
                                      "clock_ratio_a_over_b": round(xs[a] / xs[b], 3)})
        c = cyc["candidates"]
        for lb in labels:  # each candidate against the reference, under each clock
            entry["ratios"][lb] = {"cpu": t[lb] / t["reference"],
                                   "instructions": c[lb]["instructions"] / c["reference"]["instructions"],
                                   "cycles": c[lb]["cycles"] / c["reference"]["cycles"],
                                   "ll_misses_per_kinstr": 1e3 * (c[lb]["ll_misses"] or 0) / c[lb]["instructions"]}
        if "reference" in labels and "slow" in labels:
            for clock, val in (("cpu", t), ("instructions", {lb: c[lb]["instructions"] for lb in labels}),
                               ("cycles", {lb: c[lb]["cycles"] for lb in labels})):
                pairs[clock][0] += val["reference"] < val["slow"]
                pairs[clock][1] += 1
        per_problem.append(entry)
    withheld, both = {}, {(e["suite"], e["problem"]) for e in per_problem}  # problems with both clocks
    for clock in CLOCKS:
        rows = [c for (s, p, ck), m in by.items() if ck == clock and (s, p) in both
                for c in m["candidates"].values() if c["correct"]]
        held = [c for c in rows if c["speedup"] is None]
        withheld[clock] = {"honest": len(rows), "reported": len(rows) - len(held), "withheld": len(held)}
    return {"per_problem": per_problem, "disagreements": cases, "known_pairs": pairs, "withheld": withheld}


def report(a: dict, results: dict) -> None:
    print("\nper problem: rank correlation with the median CPU time per call (candidates: reference, slow, variants)")
    print(f"  {'suite':9s} {'problem':40s} {'n':>2s} {'Sp instr':>8s} {'Sp cyc':>7s} {'Kt instr':>8s} {'Kt cyc':>7s} "
          f"{'cpu rel_se':>10s}")
    for e in a["per_problem"]:
        print(f"  {e['suite']:9s} {e['problem']:40s} {e['n']:2d} {_fmt(e['spearman_instructions']):>8s} "
              f"{_fmt(e['spearman_cycles']):>7s} {_fmt(e['kendall_instructions']):>8s} {_fmt(e['kendall_cycles']):>7s} "
              f"{_fmt(e['cpu_max_rel_se']):>10s}")
    for suite in ("pareval", "polybench", None, "precise"):
        pp = [e for e in a["per_problem"] if suite in (None, e["suite"])
              or (suite == "precise" and (e["cpu_max_rel_se"] or 0) <= PRECISE)]
        if not pp:
            continue
        summ = []
        for k in ("spearman_instructions", "spearman_cycles", "kendall_instructions", "kendall_cycles"):
            xs = [e[k] for e in pp if not math.isnan(e[k])]
            summ.append(f"{k} mean {_fmt(statistics.fmean(xs))} median {_fmt(statistics.median(xs))}")
        label = {None: "all", "precise": f"cpu rel_se<={PRECISE}"}.get(suite, suite)
        print(f"  {label:9s} ({len(pp)} problems): " + "; ".join(summ))
    print("\ncandidate / reference, per clock (CPU time per call; instructions; cycles) "
          "and LL misses per 1000 instructions")
    for e in a["per_problem"]:
        for lb, r in e["ratios"].items():
            if lb == "reference":
                continue
            print(f"  {e['problem']:40s} {lb:26s} cpu {r['cpu']:6.2f}x  instr {r['instructions']:6.2f}x  "
                  f"cycles {r['cycles']:6.2f}x  LL/kI {r['ll_misses_per_kinstr']:.2f}")
    for clock, (right, n) in a["known_pairs"].items():
        print(f"known (reference faster than slow) pairs ordered by {clock}: {right}/{n}")
    print(f"pairs (CPU >= 1.2x apart) a clock orders against CPU time: {len(a['disagreements'])}")
    for d in a["disagreements"]:
        print(f"  {d['clock']:12s} {d['problem']:36s} {d['a']} vs {d['b']}: cpu {d['cpu_ratio_a_over_b']}x, "
              f"clock {d['clock_ratio_a_over_b']}x")
    print("\nhonest scores (every candidate here is correct) reported vs withheld (unmeasurable), same sweep")
    for clock, w in a["withheld"].items():
        share = w["withheld"] / w["honest"] if w["honest"] else float("nan")
        print(f"  {clock:7s} {w['reported']}/{w['honest']} reported, {w['withheld']} withheld ({share * 100:.1f}%)")
    secs = {ck: sum(m["seconds"] for m in results["measurements"] if m["clock"] == ck) for ck in CLOCKS}
    print(f"session time: {', '.join(f'{k} {v:.0f} s' for k, v in secs.items())}")


def build_throughput(spec: str, problems: int, tests: int, workers: int, out: Path, results: dict) -> list[dict]:
    """Fresh builds of the same subset, one per CLOCK:REPEATS, through the CLI as a user runs it;
    each row joins ``results["build"]`` (written to ``out``) as soon as it is measured."""
    import subprocess
    import tempfile

    rows = results.setdefault("build", [])
    for item in spec.split(","):
        clock, repeats = item.split(":")
        with tempfile.TemporaryDirectory() as d:
            cmd = [str(ROOT / ".venv" / "bin" / "perfalign"), "perf", "build", "--out", d, "--clock", clock,
                   "--repeats", repeats, "--limit-problems", str(problems), "--max-tests", str(tests),
                   "--workers", str(workers), "--json"]
            t0 = time.monotonic()
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            total = time.monotonic() - t0
            if proc.returncode:
                raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr[-500:]}")
            summ = json.loads(proc.stdout.strip().splitlines()[-1])
        measured = summ["status"].get("measured", 0)
        langs = {lang: v.get("measured", 0) for lang, v in summ["by_language"].items()}
        row = {"clock": clock, "repeats": int(repeats), "problems": summ["problems"], "measured": measured,
               "by_language": langs, "test_executions": summ["test_executions"], "wall_s": summ["wall_seconds"],
               "process_s": round(total, 1), "programs_per_min": round(60 * measured / summ["wall_seconds"], 1),
               "s_per_program": round(summ["wall_seconds"] / max(measured, 1), 2), "workers": workers}
        print(f"  build {clock:12s} repeats {repeats}: {measured} programs measured ({langs}), "
              f"{summ['test_executions']} test executions, build {summ['wall_seconds']:.1f} s "
              f"(process {total:.0f} s) = {row['programs_per_min']} programs/min, {row['s_per_program']} s/program",
              flush=True)
        rows.append(row)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", default="pareval,polybench")
    ap.add_argument("--problems", default="", help="comma-separated problem names (default: all with variants)")
    ap.add_argument("--clocks", default=",".join(CLOCKS))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--redo", action="store_true", help="measure problems already in --out again")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--merge", default="", help="comma-separated JSONs of other runs (e.g. one per clock, run side "
                                                "by side): their measurements join --out's, newest first")
    ap.add_argument("--budget-s", type=float, default=540.0, help="start no new session after this many seconds")
    ap.add_argument("--build", default="", help="CLOCK:REPEATS,... : the perf build's throughput per clock")
    ap.add_argument("--build-problems", type=int, default=3)
    ap.add_argument("--build-tests", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="build workers")
    args = ap.parse_args()
    out = Path(args.out)
    results = load_results(out)
    for other in filter(None, args.merge.split(",")):
        new = load_results(Path(other))["measurements"]
        keys = {(m["suite"], m["problem"], m["clock"]) for m in new}
        results["measurements"] = [m for m in results["measurements"]
                                   if (m["suite"], m["problem"], m["clock"]) not in keys] + new
    suites = set(args.suites.split(","))
    wanted = set(filter(None, args.problems.split(",")))
    todo = [(s, n, c) for (s, n) in VARIANTS for c in args.clocks.split(",")
            if s in suites and (not wanted or n in wanted)]
    done = {(m["suite"], m["problem"], m["clock"]) for m in results["measurements"]}
    t0 = time.monotonic()
    if not args.report_only:
        assert clk.valgrind_missing() is None, clk.valgrind_missing()
        with Sandbox(backend="bwrap", workers=1, calibrate=False) as sb:
            for suite, name, clock in todo:
                if (suite, name, clock) in done and not args.redo:
                    continue
                if time.monotonic() - t0 > args.budget_s:
                    print(f"budget spent: {suite} {name} {clock} not measured (run again to resume)")
                    continue
                m = measure(sb, suite, name, clock)
                said = ", ".join(f"{lb} {c['verdict']} speedup {_fmt(c['speedup'], 2)}"
                                 for lb, c in m["candidates"].items())
                print(f"  {suite} {name} {clock}: {m['seconds']} s, calls {m['calls']}, {said}", flush=True)
                results["measurements"] = [x for x in results["measurements"]
                                           if (x["suite"], x["problem"], x["clock"]) != (suite, name, clock)] + [m]
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(results, indent=1))
    if args.build:
        print(f"\nperf build throughput per clock (bundled CodeContests sample, first {args.build_problems} "
              f"problems, {args.build_tests} tests each, {args.workers} worker(s))")
        build_throughput(args.build, args.build_problems, args.build_tests, args.workers, out, results)
    a = analyse(results)
    report(a, results)
    results["analysis"] = a
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
