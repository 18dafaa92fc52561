"""The batch evaluation's controls on a run folder: `perfalign eval` on its contest problems and
controlled task (the reference and the slow control, beside the models given), the per-prompt
speedups side by side, and the command's wall, user and sys CPU (the sandboxed programs' included,
counted as benchmarks/main_job_bench.py counts them).

    .venv/bin/python benchmarks/eval_controls_bench.py RUN [--tasks controlled,codecontests]
        [--models ref=oracle:reference] [--align] [--code DIR] [--json FILE]

RUN is a pipeline's run folder (its controlled/ and codecontests_perf/). ``--code DIR`` runs the
perfalign package in DIR/perfalign instead of this checkout's (e.g. an older commit's
``git archive``), for a before/after on the same folder.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from main_job_bench import JobCPU  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def run(run_dir: Path, tasks: str, models: list[str], out: Path, code: str | None, align: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": code} if code else dict(os.environ)
    cmd = [sys.executable, "-m", "perfalign", "eval", "--out", str(out), "--tasks", tasks,
           "--controlled", str(run_dir / "controlled"), "--codecontests", str(run_dir / "codecontests_perf"),
           *[a for m in models for a in ("--models", m)], *(["--align", str(run_dir / "align")] if align else [])]
    cpu = JobCPU()
    load, t0 = os.getloadavg(), time.monotonic()
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=code or ROOT.parent, stdout=subprocess.DEVNULL, preexec_fn=cpu.enter)
        while proc.poll() is None:
            cpu.sample()  # often: a slot's cgroup goes with its sandbox
            time.sleep(0.25)
        wall = time.monotonic() - t0
        user, sys_ = cpu.sample()
    finally:
        cpu.close()
    return {"command": " ".join(cmd), "code": code or str(ROOT), "returncode": proc.returncode,
            "wall_s": round(wall, 1), "user_s": round(user, 1), "sys_s": round(sys_, 1),
            "load_before": load, "load_after": os.getloadavg(), "controls": controls(out), **truths(out)}


def controls(out: Path) -> dict:
    """model -> task -> per prompt (speedup, rel_se, flags, rounds) of its first sample."""
    rows: dict = {}
    for line in (out / "samples.jsonl").read_text().splitlines() if (out / "samples.jsonl").exists() else []:
        s = json.loads(line)
        if s["index"] == 0:
            rows.setdefault(s["model"], {}).setdefault(s["task"], {})[s["prompt_id"]] = \
                (s["speedup"], s.get("rel_se"), s.get("flags", []), len(s.get("round_speedups") or []))
    return rows


def truths(out: Path) -> dict:
    """The report's execution seconds and each oracle's known ratio per (task, prompt)."""
    rep = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    known = {f"{o['model']}|{o['task']}|{o['prompt_id']}": o["expected_speedup"] for o in rep.get("oracle_checks", [])}
    return {"execute_s": rep.get("timings", {}).get("execute_s"), "known": known}


def print_table(res: dict) -> None:
    print(f"code {res['code']}; exit {res['returncode']}; wall {res['wall_s']} s, user {res['user_s']} s, "
          f"sys {res['sys_s']} s (execution {res['execute_s']} s); load average before {res['load_before']}, "
          f"after {res['load_after']}")
    for model, tasks in res["controls"].items():
        for task, prompts in tasks.items():
            vals = [v for v, *_ in prompts.values()]
            known = {p: res["known"].get(f"{model}|{task}|{p}") for p in prompts}
            print(f"  {model:<18} {task:<13} mean {statistics.fmean(vals):.3f}  per prompt " + ", ".join(
                f"{p.split('/')[-1][:14]} {v:.3f}" + (f" ±{se:.3f}" if se is not None else "") + f" r{n}" +
                (f" [known {known[p]:.2f}]" if known[p] else "") +
                (" (" + ",".join(f for f in fl if not f.startswith("cpu")) + ")" if [f for f in fl if not
                                                                                     f.startswith("cpu")] else "")
                for p, (v, se, fl, n) in sorted(prompts.items())))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="a pipeline's run folder (controlled/, codecontests_perf/)")
    ap.add_argument("--tasks", default="controlled,codecontests", help="the task groups to evaluate")
    ap.add_argument("--models", action="append", default=None,
                    help="LABEL=REF, repeatable (default: ref=oracle:reference); the controls come with any")
    ap.add_argument("--align", action="store_true", help="evaluate the run's aligned models too (RUN/align)")
    ap.add_argument("--code", help="a folder holding the perfalign package to run instead of this checkout's")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="eval_controls_") as tmp:
        res = run(a.run_dir.resolve(), a.tasks, a.models or ["ref=oracle:reference"], Path(tmp) / "eval", a.code,
                  a.align)
    print_table(res)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0 if res["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
