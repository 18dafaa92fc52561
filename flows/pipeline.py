"""Flow `pipeline`: the whole DAG in one run directory.

CodeContests-Perf -> synthetic pairs -> triplets -> align (SFT, RM, RLPF, DPA) -> evaluate ->
publish (only when a repo id is configured). Each stage is skipped when its settings and the
content of its inputs are unchanged (flows/runstate.py), so reruns are incremental and a crashed
run resumes where it stopped.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Callable

from .env import configure_prefect

configure_prefect()

from prefect import flow  # noqa: E402
from prefect.task_runners import ThreadPoolTaskRunner  # noqa: E402

from .config import PerfalignConfig, load_config  # noqa: E402
from .runstate import RunState, fingerprint  # noqa: E402

# A stage: (the config, the run state) -> its summary.
StageFn = Callable[[PerfalignConfig, RunState], dict]


def _source_fingerprint(source: str) -> str:
    # A Hub source is identified by name (its revision is pinned by `datasets`' cache).
    return source if source.startswith("hf:") else fingerprint(source)


def stage_perf(cfg: PerfalignConfig, run: RunState) -> dict:
    from .perf import build_codecontests_perf

    p, workers = cfg.perf, cfg.sandbox.worker_count()
    out = run.run_dir / "codecontests_perf"
    h = cfg.section_hash("perf") + fingerprint(extra=[_source_fingerprint(p.source), cfg.sandbox.backend])

    def go() -> dict:
        return build_codecontests_perf.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))(
            source=p.source, out=str(out), repeats=p.repeats, backend=cfg.sandbox.backend,
            time_limit_factor=p.time_limit_factor, max_tests=p.max_tests or None, batch_size=p.batch_size,
            max_in_flight=2 * workers, limit_problems=p.limit_problems or None)

    summary = run.run_stage("codecontests_perf", h, p.source, go)
    if summary.get("failed_batches"):
        raise RuntimeError(f"codecontests_perf: {summary['failed_batches']} batch(es) failed; rerun to retry them")
    return summary


def synth_config(cfg: PerfalignConfig):
    """perfalign.perfdata.synth's config from the [synth] table (repeats and sandbox from theirs)."""
    from perfalign.perfdata.synth import SynthConfig

    s = cfg.synth
    return SynthConfig(n=s.n, backend=s.backend, model=s.model or None, seeds=s.seeds or None,
                       min_speedup=s.min_speedup, concurrency=s.concurrency, requests_per_minute=s.requests_per_minute,
                       repeats=cfg.perf.repeats, sandbox=cfg.sandbox.backend, verify_workers=cfg.sandbox.worker_count())


def stage_synth(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.perfdata.synth.config import resolve_backend

    from .synth import generate_synthetic

    config = synth_config(cfg)
    out = run.run_dir / "synthetic"
    # the key (or its absence) decides gemini vs the bundled sample: part of the input
    effective, _ = resolve_backend(config)
    h = cfg.section_hash("synth") + fingerprint(extra=[effective.backend, config.repeats])
    return run.run_stage("synthetic", h, f"{effective.backend} seeds={cfg.synth.seeds}",
                         lambda: generate_synthetic(config, str(out)))


def stage_triplets(cfg: PerfalignConfig, run: RunState) -> dict:
    from .align import triplets

    t = cfg.triplets
    cc, syn, out = run.run_dir / "codecontests_perf", run.run_dir / "synthetic", run.run_dir / "triplets"
    h = fingerprint(cc / "data", syn / "data", extra=dataclasses.asdict(t))
    return run.run_stage("triplets", h, f"{cc} + {syn}", lambda: triplets(str(cc), str(syn), str(out), t))


def stage_align(cfg: PerfalignConfig, run: RunState) -> dict:
    from .align import align

    tri, cc, work = run.run_dir / "triplets", run.run_dir / "codecontests_perf", run.run_dir / "align"
    h = fingerprint(tri / "data", extra=[dataclasses.asdict(cfg.align), dataclasses.asdict(cfg.triplets)])
    # a changed input re-trains: the stage directories of the earlier inputs are replaced
    return run.run_stage("align", h, str(tri), lambda: align(
        str(tri), str(work), str(cc), cfg.align.profile, cfg.align.base_model, stages=list(cfg.align.stages),
        overwrite=True, sandbox_backend=cfg.sandbox.backend, workers=cfg.sandbox.worker_count()))


def eval_config_from(cfg: PerfalignConfig, models: list, codecontests_dir: str | None, tasks: list[str] | None = None,
                     **extra):
    """evaluation's EvalConfig from the [eval] and [sandbox] tables (``extra``: the evaluation's
    own settings a command sets, e.g. suite folders; None values ignored). Validated."""
    from .evaluate import eval_config

    e = cfg.eval
    return eval_config(e.profile, models, list(tasks or e.tasks), codecontests_dir, num_samples=e.n_samples,
                       temperature=e.temperature, top_p=e.top_p, omp_threads=e.threads,
                       workers=cfg.sandbox.worker_count(), backend=cfg.sandbox.backend, **extra)


def stage_evaluate(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.evaluation import models_from_run_dir

    from .align import controlled_dir
    from .evaluate import evaluate

    e = cfg.eval
    work, cc, out = run.run_dir / "align", run.run_dir / "codecontests_perf", run.run_dir / "evaluate"
    h = fingerprint(work, extra=[dataclasses.asdict(e), fingerprint(cc / "data")])

    def go() -> dict:
        ctl = str(controlled_dir(run.run_dir / "triplets")) if "controlled" in e.tasks else None
        config = eval_config_from(cfg, models_from_run_dir(work, prefix="base"), str(cc), controlled_dir=ctl)
        return evaluate(config, str(out))

    return run.run_stage("evaluate", h, str(work), go)


def stage_publish(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.perfdata.publish import publish_dataset

    pub = cfg.publish
    if not pub.repo_id:
        return {"skipped": "no publish.repo_id configured"}
    src = run.run_dir / "codecontests_perf"
    h = fingerprint(src, extra=dataclasses.asdict(pub))
    return run.run_stage("publish", h, str(src), lambda: {
        "url": publish_dataset(src, pub.repo_id, private=pub.private)})


STAGES: list[tuple[str, StageFn]] = [
    ("codecontests_perf", stage_perf),
    ("synthetic", stage_synth),
    ("triplets", stage_triplets),
    ("align", stage_align),
    ("evaluate", stage_evaluate),
    ("publish", stage_publish),
]


@flow(name="pipeline")
def pipeline(out: str = "runs/embedded", config: PerfalignConfig | None = None, profile: str = "embedded",
             config_path: str | None = None, source: str | None = None, repeats: int | None = None,
             workers: int | None = None) -> dict:
    """Run every stage in ``out`` (the run directory), skipping the unchanged ones.

    ``config``: the typed configuration the CLI built; without it (a scheduled deployment) it is
    built here from ``config_path``, ``profile`` and the flags."""
    if config is None:
        config = load_config(config_path, profile, flags={"perf.source": source, "perf.repeats": repeats,
                                                          "sandbox.workers": workers})
    t0 = time.monotonic()
    run = RunState(out)
    run.data["config"] = config.to_dict()
    run.save()
    done: dict[str, dict] = {}
    for name, fn in STAGES:
        done[name] = fn(config, run)
    return {"out": str(run.run_dir), "stages": done, "states": {k: v["state"] for k, v in run.data["stages"].items()},
            "wall_seconds": round(time.monotonic() - t0, 1)}
