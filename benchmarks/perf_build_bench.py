"""CodeContests-Perf benchmark, on the bundled sample.

1. Test executions per second per core through the build (the Prefect flow, local threads)
   vs through the sandbox alone on the same programs (Sandbox.run_many): the orchestration
   overhead as a ratio (target >= 80%). Both measured in this one run, same settings.
2. Projected core-hours for the paper's 4.5M submissions, from the measured per-execution
   cost and a stated number of tests per submission.
3. Rank agreement (Spearman) of per-problem solution runtimes between two independent builds,
   and how often the measured order matches each problem's known fast/slow pairs.

    .venv/bin/python benchmarks/perf_build_bench.py [--limit-problems N] [--repeats 3] [--workers 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy.stats import spearmanr  # noqa: E402

from perfalign.perfdata import shards  # noqa: E402
from perfalign.perfdata.codecontests import iter_problems  # noqa: E402
from perfalign.perfdata.perf import BuildSettings, problem_limits  # noqa: E402
from perfalign.perfdata.records import Problem  # noqa: E402
from perfalign.perfdata.schema import arrow_schema  # noqa: E402
from perfalign.sandbox import Job, Sandbox  # noqa: E402

SAMPLE = ROOT / "data" / "codecontests_sample" / "data"
KNOWN = ROOT / "data" / "codecontests_sample" / "known_order.json"
PAPER_SUBMISSIONS = 4_500_000


def sandbox_only(problems: list[Problem], settings: BuildSettings, workers: int) -> tuple[int, float]:
    jobs = []
    for p in problems:
        limits, tests = problem_limits(p, settings)
        jobs += [Job(s.solution, s.language, tests, limits, settings.repeats, stop_on_failure=True)
                 for s in p.submissions if s.is_correct]
    with Sandbox(workers=workers) as sb:
        sb.calibration()
        t0 = time.perf_counter()
        execs = sum(sum(len(t.cpu_times_s) for t in r.tests) for _, r in sb.run_many(jobs, workers=workers))
        return execs, time.perf_counter() - t0


def through_build(out: Path, settings: BuildSettings, workers: int, limit: int | None) -> tuple[int, float]:
    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import run_build

    t0 = time.perf_counter()
    perf = PerfSettings(source=str(SAMPLE), limit_problems=limit, repeats=settings.repeats,
                        batch_size=settings.batch_size)
    summary = run_build(str(out), perf, workers=workers)
    return summary["test_executions"], time.perf_counter() - t0


def runtimes(out: Path) -> dict[tuple[str, str], float]:
    t = shards.read_table(out, "submissions", arrow_schema("submissions"), ["problem_id", "solution", "runtime_s"])
    return {(p, s): r for p, s, r in zip(*(t.column(c).to_pylist() for c in ("problem_id", "solution", "runtime_s")))
            if r is not None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit-problems", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tests-per-submission", type=float, default=None,
                    help="for the projection (default: the sample's mean); CodeContests problems often have far more")
    args = ap.parse_args()
    settings = BuildSettings(repeats=args.repeats)
    problems = [p for p in iter_problems(str(SAMPLE), limit=args.limit_problems) if isinstance(p, Problem)]
    # warm the compile cache so both sides measure execution, not compilation
    sandbox_only(problems, BuildSettings(repeats=1, max_tests=1), args.workers)

    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        # interleaved: sandbox alone, build 1, sandbox alone again, build 2 (the machine is shared)
        e_sb1, s_sb1 = sandbox_only(problems, settings, args.workers)
        e_b1, s_b1 = through_build(Path(d1), settings, args.workers, args.limit_problems)
        e_sb2, s_sb2 = sandbox_only(problems, settings, args.workers)
        e_b2, s_b2 = through_build(Path(d2), settings, args.workers, args.limit_problems)
        r_sb = statistics.mean([e_sb1 / s_sb1, e_sb2 / s_sb2]) / args.workers
        r_b = statistics.mean([e_b1 / s_b1, e_b2 / s_b2]) / args.workers
        print(f"problems: {len(problems)}, workers: {args.workers}, repeats: {args.repeats}")
        print(f"1. sandbox alone: {r_sb:.1f} test executions/s/core | through the build (Prefect flow): "
              f"{r_b:.1f} /s/core | ratio {r_b / r_sb:.1%}  "
              f"(build wall {s_b1:.1f}/{s_b2:.1f} s incl. planning and Parquet)")

        tests = args.tests_per_submission or statistics.mean(len(p.tests) for p in problems)
        sec_per_exec = 1.0 / r_b
        core_hours = PAPER_SUBMISSIONS * tests * args.repeats * sec_per_exec / 3600
        print(f"2. projection: {PAPER_SUBMISSIONS:,} submissions x {tests:.1f} tests x {args.repeats} repeats at "
              f"{sec_per_exec * 1000:.1f} ms per execution (this sample's programs) = {core_hours:,.0f} core-hours")

        a, b = runtimes(Path(d1)), runtimes(Path(d2))
        rhos, agree, total = [], 0, 0
        for p in problems:
            keys = [k for k in a if k[0] == p.problem_id and k in b]
            if len(keys) >= 3:
                rhos.append(spearmanr([a[k] for k in keys], [b[k] for k in keys]).statistic)
        known = json.loads(KNOWN.read_text()) if KNOWN.exists() else {}
        for p in problems:
            sols = [s.solution for s in p.submissions if s.is_correct]
            for fast, slow in known.get(p.name, {}).get("known_faster", []):
                for run in (a, b):
                    rf, rs = run.get((p.problem_id, sols[fast])), run.get((p.problem_id, sols[slow]))
                    if rf is not None and rs is not None:
                        total += 1
                        agree += rf < rs
        print(f"3. Spearman rho between two builds, per problem: median {statistics.median(rhos):.3f}, "
              f"min {min(rhos):.3f} over {len(rhos)} problems; known fast/slow pairs ordered correctly: "
              f"{agree}/{total} ({agree / max(total, 1):.1%})")


if __name__ == "__main__":
    main()
