"""Start-up against the job: wall and CPU seconds (the command and its children) of
`perfalign --help`, `perfalign config`, a real and a no-op `perfalign perf build` (bundled sample, 2 problems) and,
with --pipeline, a real and a no-op `perfalign pipeline` (embedded profile), one fresh project
directory per run. A no-op rerun should cost at most a quarter of the real job.

    .venv/bin/python benchmarks/startup_bench.py [--pipeline] [--code DIR] [--repeats 3]
        [--skip-build] [--run DIR] [--set table.key=value ...]

--code DIR times another checkout of the package (a folder holding `perfalign/`), e.g. the code
before a change exported with `git archive`. --run DIR times the no-op pipeline against a run
that finished already (made by `perfalign pipeline --out DIR` with the same --set values)
instead of a real run here; the real job's time is then the sum of its stages' recorded seconds
(the flows' work without their start-up: a lower bound, so the ratio errs high).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s of the command and its children); a failure ends the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def recorded_seconds(run: Path) -> float:
    """The sum of a finished run's stage times (its stages.json)."""
    stages = json.loads((run / "stages.json").read_text())["stages"]
    if any(r.get("state") not in ("completed", "skipped") for r in stages.values()):
        sys.exit(f"{run} is not a finished run: {({k: r.get('state') for k, r in stages.items()})}")
    return sum(r.get("seconds") or 0.0 for r in stages.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pipeline", action="store_true", help="Also a real and a no-op `perfalign pipeline` (minutes).")
    ap.add_argument("--code", type=Path, help="A folder holding the `perfalign` package to time (default: this one).")
    ap.add_argument("--repeats", type=int, default=3, help="Runs of each no-op command (the median is reported).")
    ap.add_argument("--skip-build", action="store_true", help="Leave out the `perf build` rows.")
    ap.add_argument("--run", type=Path, help="A finished pipeline run directory to time the no-op pipeline against.")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="A setting for the pipeline runs (repeatable), as `perfalign pipeline --set` takes it.")
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1")
    if args.code:
        env["PYTHONPATH"] = str(args.code.resolve())
    cli = [sys.executable, "-m", "perfalign.cli"]
    rows: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        cwd = Path(tmp)
        env["PERFALIGN_HOME"] = str(cwd / ".perfalign")
        env.pop("PREFECT_API_URL", None)

        def median(argv: list[str]) -> tuple[float, float]:
            runs = [timed(argv, cwd, env) for _ in range(args.repeats)]
            return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

        rows["perfalign --help"] = median(cli + ["--help"])
        rows["perfalign config"] = median(cli + ["config"])
        if not args.skip_build:
            build = cli + ["perf", "build", "--out", "cc", "--limit-problems", "2", "--json"]
            rows["perf build (real, 2 problems)"] = timed(build, cwd, env)
            rows["perf build (no-op rerun)"] = median(build)
        sets = [a for kv in args.sets for a in ("--set", kv)]
        if args.run:
            pipe = cli + ["pipeline", "--out", str(args.run.resolve()), *sets]
            rows["pipeline (real, embedded)"] = (recorded_seconds(args.run), float("nan"))
            rows["pipeline (no-op rerun)"] = median(pipe)
        elif args.pipeline:
            pipe = cli + ["pipeline", "--out", "run", *sets]
            rows["pipeline (real, embedded)"] = timed(pipe, cwd, env)
            rows["pipeline (no-op rerun)"] = median(pipe)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"code: {args.code or 'this checkout'}")
    print(f"{'command':34s} {'wall s':>8s} {'CPU s':>8s}")
    for name, (wall, cpu) in rows.items():
        print(f"{name:34s} {wall:8.1f} {cpu:8.1f}")
    for job in ("perf build", "pipeline"):
        real, noop = rows.get(f"{job} (real" + (", 2 problems)" if job == "perf build" else ", embedded)")), \
            rows.get(f"{job} (no-op rerun)")
        if real and noop:
            print(f"{job}: no-op / real wall = {noop[0] / real[0]:.2f} (target <= 0.25)")
    print(json.dumps({k: {"wall_s": round(w, 2), "cpu_s": round(c, 2)} for k, (w, c) in rows.items()}))


if __name__ == "__main__":
    main()
