"""CPU seconds to score one HumanEval sample, as the arms experiment scores it
(`humaneval.score_problem` with the profile's [eval.probe], one sandbox for all samples): the
canonical solution (a correct sample) and a wrong answer (`return None`) on the first N held-out
problems. CPU is this process's plus the sandbox's (its cgroup slots' cpuacct counters, which
charge every task run inside). Prints one JSON line per score, then the means.

    nice -n 5 .venv/bin/python benchmarks/humaneval_score_cost.py --problems 10 --profile qwen-0.5b
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import time


def sandbox_cpu_s() -> float | None:
    """CPU seconds charged so far to this process's sandbox slots (cgroup v1 cpuacct), or None."""
    files = glob.glob(f"/sys/fs/cgroup/cpuacct/perfalign/{os.getpid()}-*/cpuacct.usage")
    return sum(int(open(f).read()) for f in files) / 1e9 if files else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=10, help="the first N held-out problems")
    ap.add_argument("--profile", default="qwen-0.5b", help="whose [eval.probe] and sandbox settings")
    a = ap.parse_args()

    from perfalign.config.tables import preset
    from perfalign.evaluation.tasks import humaneval as he
    from perfalign.measure.harness import ProblemUnusable
    from perfalign.sandbox import Sandbox

    probe = preset("eval", profile=a.profile).probe
    per: dict[str, list[float]] = {"canonical": [], "wrong": []}
    print(json.dumps({"loadavg_start": os.getloadavg()}), flush=True)
    with Sandbox.from_settings(preset("sandbox", profile=a.profile), workers=2) as sb:
        for pid in he.split("heldout")[:a.problems]:
            p = he.problem(pid)
            controls = {"canonical": p.prompt + p.canonical_solution, "wrong": p.prompt + "    return None\n"}
            for name, code in controls.items():
                box0, cpu0, t0 = sandbox_cpu_s(), time.process_time(), time.time()
                try:
                    s, info = he.score_problem(sb, pid, code, probe)
                    row = {"verdict": s.verdict, "speedup": s.speedup, "scale": info.get("scale")}
                except ProblemUnusable as e:  # withheld in the experiment; its cost counts all the same
                    row = {"verdict": "NO_RESULT", "message": str(e)}
                box = (sandbox_cpu_s() or 0.0) - (box0 or 0.0)
                cpu = time.process_time() - cpu0 + box
                per[name].append(cpu)
                print(json.dumps({"problem": pid, "control": name, **row, "sandbox_cpu_s": round(box, 2),
                                  "cpu_s": round(cpu, 2), "wall_s": round(time.time() - t0, 1)}), flush=True)
    print(json.dumps({k: {"n": len(v), "mean_cpu_s": round(statistics.fmean(v), 2),
                          "max_cpu_s": round(max(v), 2)} for k, v in per.items() if v}
                     | {"loadavg_end": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
