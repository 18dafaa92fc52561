"""Seconds per candidate program of the probe harness, with the trusted-unit object cache
(sandbox/cache.py: UnitCache) off, cold and warm, measured interleaved in one run.

Each program is the harness's own job (measure/harness.py: ProbeSession.job) for one ParEval
problem: the problem's driver as the trusted unit, a distinct candidate (so the whole-program
cache never hits), built and run once in mode V (one call). Per program and configuration it records the
build's seconds (CompileInfo.seconds) and the whole job's wall seconds.

- off:  Sandbox(unit_cache=False): every build compiles the driver (the behaviour before);
- cold: the unit cache emptied before each program: the driver compiled alone, then linked;
- warm: the driver's object already cached: only the candidate is compiled.

    nice -n 10 .venv/bin/python benchmarks/unit_cache_bench.py [-n 6] [--problem 02_dense_la_gemm]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from perfalign.evaluation.tasks.pareval import ParEvalCheckout  # noqa: E402
from perfalign.measure.harness import ProbeSession, ProbeSettings  # noqa: E402
from perfalign.sandbox import Sandbox  # noqa: E402

PAREVAL = Path(__file__).resolve().parents[2] / "shared" / "external" / "pareval"


def _cache_dir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="perfalign-unitcache-bench-"))
    d.chmod(0o755)  # the sandbox's unprivileged uid writes the compiled program there
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=6, help="candidate programs per configuration")
    ap.add_argument("--problem", default="02_dense_la_gemm")
    ap.add_argument("--model", default="serial")
    ap.add_argument("--pareval", type=Path, default=PAREVAL)
    a = ap.parse_args()
    p = ParEvalCheckout(a.pareval).problem(a.problem, a.model)
    dirs = {k: _cache_dir() for k in ("off", "cold", "warm")}
    boxes = {k: Sandbox(backend="auto", workers=1, calibrate=False, cache_dir=d, unit_cache=(k != "off"))
             for k, d in dirs.items()}
    sessions = {k: ProbeSession(sb, p, ProbeSettings()) for k, sb in boxes.items()}
    s = sessions["warm"].s

    def program(kind: str, i: int) -> tuple[float, float, bool]:
        sess = sessions[kind]
        if kind == "cold":  # every trusted object gone: this program compiles the driver alone first
            for entry in boxes[kind].units.root.glob("??"):
                shutil.rmtree(entry)
        code = f"// candidate {kind} {i}\n{p.reference}"  # distinct bytes: no whole-program cache hit
        job = sess.job(code, "V", 1, sess.v_seed, s.validate_time_s)  # one call: the build dominates
        t0 = time.perf_counter()
        r = boxes[kind].run_job(job)
        wall = time.perf_counter() - t0
        assert r.ok, (kind, r.verdict, r.message, r.compile.message[-2000:])
        return r.compile.seconds, wall, "object from the unit cache" in r.compile.message

    load0 = os.getloadavg()[0]
    try:
        program("warm", -1)  # the warm cache's one driver compile (V mode), not counted
        results: dict[str, list[tuple[float, float, bool]]] = {k: [] for k in boxes}
        order = list(boxes)
        rng = random.Random(0)
        for i in range(a.n):
            rng.shuffle(order)  # interleaved, in a different order each round: load hits all three alike
            for kind in order:
                results[kind].append(program(kind, i))
        print(f"problem {p.key} ({p.model}), {a.n} candidate programs per configuration, backend "
              f"{boxes['warm'].name}, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}; "
              "seconds per program, median [min-max]")
        for kind in ("off", "cold", "warm"):
            build, wall, reused = zip(*results[kind])
            print(f"  {kind:5s} build {statistics.median(build):6.2f} [{min(build):.2f}-{max(build):.2f}]  "
                  f"job {statistics.median(wall):6.2f} [{min(wall):.2f}-{max(wall):.2f}]  "
                  f"driver object reused {sum(reused)}/{a.n}")
        med = {k: statistics.median(w for _, w, _ in results[k]) for k in results}
        medb = {k: statistics.median(b for b, _, _ in results[k]) for k in results}
        print(f"  warm/off: build {medb['warm'] / medb['off']:.2f}x, job {med['warm'] / med['off']:.2f}x; "
              f"cold/off: build {medb['cold'] / medb['off']:.2f}x, job {med['cold'] / med['off']:.2f}x")
        print(f"  unit cache counters: cold compiled {boxes['cold'].units.compiled}, "
              f"warm compiled {boxes['warm'].units.compiled} hits {boxes['warm'].units.hits}")
    finally:
        for sb in boxes.values():
            sb.close()
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
