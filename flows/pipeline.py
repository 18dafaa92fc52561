"""Flow `pipeline`: the whole DAG in one run directory.

CodeContests-Perf -> synthetic pairs -> triplets -> align (SFT, RM, RLPF, DPA) -> evaluate ->
publish (only when a repo id is configured). Each stage is skipped when its settings and the
content of its inputs are unchanged (flows/runstate.py), so reruns are incremental and a crashed
run resumes where it stopped.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from .env import configure_prefect

configure_prefect()

from prefect import flow  # noqa: E402
from prefect.task_runners import ThreadPoolTaskRunner  # noqa: E402

from .config import load_config, section_hash  # noqa: E402
from .runstate import RunState, fingerprint  # noqa: E402

# A stage: (config, run state, summaries of the stages before it) -> its summary.
StageFn = Callable[[dict, RunState, dict], dict]


def _workers(cfg: dict) -> int:
    return int(cfg["sandbox"].get("workers") or 0) or os.cpu_count() or 1


def _source_fingerprint(source: str) -> str:
    # A Hub source is identified by name (its revision is pinned by `datasets`' cache).
    return source if source.startswith("hf:") else fingerprint(source)


def stage_perf(cfg: dict, run: RunState, done: dict) -> dict:
    from .perf import build_codecontests_perf

    p, workers = cfg["perf"], _workers(cfg)
    out = run.run_dir / "codecontests_perf"
    h = section_hash(cfg, "perf") + fingerprint(extra=[_source_fingerprint(p["source"]), cfg["sandbox"]["backend"]])

    def go() -> dict:
        return build_codecontests_perf.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))(
            source=p["source"], out=str(out), repeats=int(p["repeats"]), backend=cfg["sandbox"]["backend"],
            time_limit_factor=float(p["time_limit_factor"]), max_tests=int(p["max_tests"]) or None,
            batch_size=int(p["batch_size"]), max_in_flight=2 * workers,
            limit_problems=int(p.get("limit_problems") or 0) or None)

    summary = run.run_stage("codecontests_perf", h, p["source"], go)
    if summary.get("failed_batches"):
        raise RuntimeError(f"codecontests_perf: {summary['failed_batches']} batch(es) failed; rerun to retry them")
    return summary


def stage_synth(cfg: dict, run: RunState, done: dict) -> dict:
    from perfdata.synth import SynthConfig

    from .synth import generate_synthetic

    s = cfg["synth"]
    out = run.run_dir / "synthetic"
    config = SynthConfig(n=int(s["n"]), backend=s["backend"], model=s["model"] or None, seeds=s["seeds"] or None,
                         min_speedup=float(s["min_speedup"]), concurrency=int(s["concurrency"]),
                         requests_per_minute=float(s["requests_per_minute"]), repeats=int(cfg["perf"]["repeats"]),
                         sandbox=cfg["sandbox"]["backend"], verify_workers=_workers(cfg))
    # the key (or its absence) decides gemini vs the bundled sample: part of the input
    from perfdata.synth.config import resolve_backend

    effective, _ = resolve_backend(config)
    h = section_hash(cfg, "synth") + fingerprint(extra=[effective.backend, config.repeats])
    return run.run_stage("synthetic", h, f"{effective.backend} seeds={s['seeds']}", lambda: generate_synthetic(config, str(out)))


def stage_triplets(cfg: dict, run: RunState, done: dict) -> dict:
    from .align import triplets

    t = cfg["triplets"]
    cc, syn, out = run.run_dir / "codecontests_perf", run.run_dir / "synthetic", run.run_dir / "triplets"
    h = fingerprint(cc / "data", syn / "data", extra=t)
    return run.run_stage("triplets", h, f"{cc} + {syn}", lambda: triplets(
        str(cc), str(syn), str(out), int(t["seed"]), float(t["max_margin"]), int(t["held_out_count"])))


def stage_align(cfg: dict, run: RunState, done: dict) -> dict:
    from .align import align, preflight, stage_configs

    a = cfg["align"]
    tri, cc, work = run.run_dir / "triplets", run.run_dir / "codecontests_perf", run.run_dir / "align"
    stages = list(a["stages"])
    h = fingerprint(tri / "data", extra=[a, cfg["triplets"]])
    # a changed input re-trains: the stage directories of the earlier inputs are replaced
    def go() -> dict:
        configs = stage_configs(a["profile"], str(tri), str(work), str(cc), a["base_model"], overwrite=True)
        preflight(configs, stages, str(tri), str(cc), str(work))
        return align(str(tri), str(work), str(cc), a["profile"], a["base_model"], stages=stages, overwrite=True)

    return run.run_stage("align", h, str(tri), go)


def stage_evaluate(cfg: dict, run: RunState, done: dict) -> dict:
    from evaluation import models_from_run_dir

    from .evaluate import eval_config, evaluate

    e = cfg["eval"]
    work, cc, out = run.run_dir / "align", run.run_dir / "codecontests_perf", run.run_dir / "evaluate"
    h = fingerprint(work, extra=[e, fingerprint(cc / "data")])

    def go() -> dict:
        models = [f"{m.label}={m.ref}" for m in models_from_run_dir(work, prefix="base")]
        config = eval_config(e["profile"], models, list(e["tasks"]), str(cc), num_samples=int(e["n_samples"]),
                             temperature=float(e["temperature"]), top_p=float(e["top_p"]),
                             omp_threads=int(e["threads"]), workers=_workers(cfg), backend=cfg["sandbox"]["backend"])
        return evaluate(config, str(out))

    return run.run_stage("evaluate", h, str(work), go)


def stage_publish(cfg: dict, run: RunState, done: dict) -> dict:
    from perfdata.publish import publish_dataset

    pub = cfg["publish"]
    if not pub.get("repo_id"):
        return {"skipped": "no publish.repo_id configured"}
    src = run.run_dir / "codecontests_perf"
    h = fingerprint(src, extra=pub)
    return run.run_stage("publish", h, str(src), lambda: {
        "url": publish_dataset(src, pub["repo_id"], private=bool(pub.get("private")))})


STAGES: list[tuple[str, StageFn]] = [
    ("codecontests_perf", stage_perf),
    ("synthetic", stage_synth),
    ("triplets", stage_triplets),
    ("align", stage_align),
    ("evaluate", stage_evaluate),
    ("publish", stage_publish),
]


@flow(name="pipeline")
def pipeline(out: str = "runs/embedded", profile: str = "embedded", config_path: str | None = None,
             overrides: list[str] | None = None, source: str | None = None, repeats: int | None = None,
             workers: int | None = None) -> dict:
    """Run every stage in ``out`` (the run directory), skipping the unchanged ones."""
    extra = list(overrides or [])
    if source:
        extra.append(f"perf.source={source!r}")
    if repeats:
        extra.append(f"perf.repeats={int(repeats)}")
    if workers:
        extra.append(f"sandbox.workers={int(workers)}")
    cfg = load_config(Path(config_path) if config_path else None, profile, extra)
    t0 = time.monotonic()
    run = RunState(out)
    run.data["config"] = cfg
    run.save()
    done: dict[str, dict] = {}
    for name, fn in STAGES:
        done[name] = fn(cfg, run, done)
    return {"out": str(run.run_dir), "stages": done, "states": {k: v["state"] for k, v in run.data["stages"].items()},
            "wall_seconds": round(time.monotonic() - t0, 1)}
