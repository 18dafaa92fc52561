"""The main job from empty caches: wall, user and sys CPU, and CPU/wall per stage and in total.

Runs ``perfalign pipeline`` (the embedded profile unless PIPELINE_ARGS say otherwise) with a fresh
PERFALIGN_CACHE_DIR and a fresh --out, samples the CPU of its whole process tree (the pipeline,
its trainers' child interpreters, the sandboxes and their programs: /proc, live processes plus
what they reaped) a few times a second, and cuts the samples where stages.json shows a stage
start. The total is the exact rusage of the finished job (wait4), beside the sampled sum.

    .venv/bin/python benchmarks/main_job_bench.py [--json FILE] [--keep DIR] [-- PIPELINE_ARGS...]

Per trainer of the align stage: its steps, seconds and steps/s as its metrics.json records them.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
STARTED = ("running", "completed", "skipped", "failed", "interrupted")
STAGES = ("codecontests_perf", "synthetic", "controlled", "triplets", "align", "evaluate", "publish")


CGROUPS = Path("/sys/fs/cgroup")


class JobCPU:
    """User and sys CPU seconds of the job: its own cgroup (the pipeline, its trainers' child
    interpreters, the Prefect server) plus the sandbox's slot cgroups its processes own
    (cpuacct/perfalign/<pid>-<n>: the sandboxed builds and programs, which leave the job's cgroup
    and whose CPU reaches no parent's rusage). Cgroup v1 cpuacct, as on this project's hosts."""

    def __init__(self) -> None:
        self.root = next((CGROUPS / d for d in ("cpuacct", "cpu,cpuacct") if (CGROUPS / d / "cpuacct.stat").exists()),
                         None)
        if self.root is None:
            raise SystemExit("main_job_bench: needs cgroup v1 cpuacct (/sys/fs/cgroup/cpuacct) to count the "
                             "sandboxed programs' CPU")
        self.group = self.root / f"perfalign-bench-{os.getpid()}"
        self.group.mkdir()
        self.pids: set[int] = set()
        self.slots: dict[str, tuple[float, float]] = {}  # last seen: a slot is removed when its sandbox closes

    def enter(self) -> None:  # preexec_fn of the pipeline: it and its descendants start in the group
        (self.group / "cgroup.procs").write_text("0")

    @staticmethod
    def _stat(d: Path) -> tuple[float, float]:
        f = dict(line.split() for line in (d / "cpuacct.stat").read_text().splitlines())
        return int(f["user"]) / TICK, int(f["system"]) / TICK

    def sample(self) -> tuple[float, float]:
        self.pids |= {int(p) for p in (self.group / "cgroup.procs").read_text().split()}
        for d in (self.root / "perfalign").glob("*-*"):
            if d.name.split("-")[0].isdigit() and int(d.name.split("-")[0]) in self.pids:
                try:
                    self.slots[d.name] = self._stat(d)
                except (OSError, KeyError, ValueError):
                    pass  # removed between the listing and the read: its last sample stands
        own = self._stat(self.group)
        return own[0] + sum(u for u, _ in self.slots.values()), own[1] + sum(s for _, s in self.slots.values())

    def close(self, wait_s: float = 30.0) -> None:
        deadline = time.monotonic() + wait_s  # the job's children (its Prefect server) may end after it
        while True:
            try:
                return self.group.rmdir()
            except OSError as e:
                if time.monotonic() > deadline:
                    print(f"main_job_bench: {self.group} not removed: {e}", file=sys.stderr)
                    return
                time.sleep(0.5)


def _states(run_dir: Path) -> dict[str, str]:
    try:
        return {k: v.get("state", "") for k, v in json.loads((run_dir / "stages.json").read_text())["stages"].items()}
    except (OSError, ValueError, KeyError):
        return {}


def trainer_rates(run_dir: Path) -> dict[str, dict]:
    """Per trainer of the align stage: steps, seconds (the stage's runtime_s, model loads
    included) and steps/s from its metrics.json; the median step's seconds where recorded."""
    out = {}
    for m in sorted((run_dir / "align").glob("*/metrics.json")):
        d = json.loads(m.read_text())
        steps, secs = (d.get("step_seconds") or {}).get("steps") or d.get("train_steps"), d.get("runtime_s")
        out[m.parent.name] = {"steps": steps, "seconds": secs, "steps_per_s": steps / secs if steps and secs else None,
                              "median_step_s": (d.get("step_seconds") or {}).get("median_s")}
    return out


def run(pipeline_args: list[str], work: Path, poll_s: float = 0.25) -> dict:
    run_dir, cache = work / "run", work / "cache"
    env = {**os.environ, "PERFALIGN_CACHE_DIR": str(cache)}
    cmd = [str(ROOT / ".venv" / "bin" / "perfalign"), "pipeline", "--out", str(run_dir), *pipeline_args]
    cpu = JobCPU()
    load, t0 = os.getloadavg(), time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=sys.stderr, preexec_fn=cpu.enter)  # output beside ours
    marks = [("start-up", t0, 0.0, 0.0)]  # (segment that starts here, time, user, sys)
    seen: set[str] = set()
    try:
        try:
            while proc.poll() is None:
                states = _states(run_dir)
                new = [s for s in STAGES if s not in seen and states.get(s) in STARTED]
                if new:
                    now = cpu.sample()
                    for s in new:
                        seen.add(s)
                        marks.append((s, time.monotonic(), *now))
                time.sleep(poll_s)
                cpu.sample()  # slots are read often: one closes with its sandbox
        except KeyboardInterrupt:  # Ctrl-C reached the job too: the figures so far, the last stage unfinished
            proc.wait()
        wall = time.monotonic() - t0
        user, sys_ = cpu.sample()
    finally:
        cpu.close()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # what reached this process by rusage, for comparison
    marks.append(("end", t0 + wall, user, sys_))
    rows = []
    for (name, t, u, s), (_, t2, u2, s2) in zip(marks, marks[1:]):
        w = t2 - t
        rows.append({"stage": name, "wall_s": round(w, 1), "user_s": round(u2 - u, 1), "sys_s": round(s2 - s, 1),
                     "cpu_per_wall": round((u2 - u + s2 - s) / w, 2) if w > 0 else None})
    return {"command": " ".join(cmd), "returncode": proc.returncode, "wall_s": round(wall, 1),
            "user_s": round(user, 1), "sys_s": round(sys_, 1), "cpu_per_wall": round((user + sys_) / wall, 2),
            "rusage_cpu_s": round(ru.ru_utime + ru.ru_stime, 1), "stages": rows, "trainers": trainer_rates(run_dir),
            "load_before": load, "load_after": os.getloadavg()}


def print_table(res: dict) -> None:
    print(f"{'stage':<18} {'wall s':>8} {'user s':>8} {'sys s':>8} {'CPU/wall':>9}")
    for r in res["stages"]:
        print(f"{r['stage']:<18} {r['wall_s']:>8} {r['user_s']:>8} {r['sys_s']:>8} {r['cpu_per_wall']!s:>9}")
    print(f"{'total':<18} {res['wall_s']:>8} {res['user_s']:>8} {res['sys_s']:>8} {res['cpu_per_wall']!s:>9}")
    for name, t in res["trainers"].items():
        rate = f"{t['steps_per_s']:.2f}" if t["steps_per_s"] else "?"
        print(f"  trainer {name:<12} steps {t['steps']!s:>5}  {t['seconds']!s:>7} s  {rate} steps/s  "
              f"median step {t['median_step_s']} s")
    print(f"exit {res['returncode']}; load average (1, 5, 15 min) before {res['load_before']}, after "
          f"{res['load_after']}; {res['command']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--keep", help="run in this (new, empty) folder and keep it; default: a temporary one")
    ap.add_argument("pipeline_args", nargs="*", help="more options for `perfalign pipeline` (after --)")
    a = ap.parse_args()
    if a.keep:
        work = Path(a.keep)
        if work.exists() and any(work.iterdir()):
            ap.error(f"--keep {work}: not empty (the caches must start empty)")
        work.mkdir(parents=True, exist_ok=True)
        res = run(a.pipeline_args, work)
    else:
        with tempfile.TemporaryDirectory(prefix="main_job_") as tmp:
            res = run(a.pipeline_args, Path(tmp))
    print_table(res)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0 if res["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
