"""Flow `pipeline`: the whole DAG in one run directory.

CodeContests-Perf -> synthetic pairs -> the controlled task (with ``triplets.controlled_task``) ->
triplets -> align (SFT, RM, RLPF, DPA) -> evaluate -> publish (only when a repo id is configured).
Each stage is skipped when its settings and the content of its inputs are unchanged
(flows/runstate.py), so reruns are incremental and a crashed run resumes where it stopped.
"""
from __future__ import annotations

import contextvars
import dataclasses
import shutil
import threading
import time
from concurrent.futures import Future
from typing import Callable

from prefect import flow

from perfalign.config.tables import DEFAULT_PROFILE, PerfalignConfig, load_config

from .env import route_library_logs
from .runstate import RunState, check_run_dir, default_run_dir
from .stagekeys import (
    NO_CONTROLLED_TASK,
    NOT_PUBLISHED,
    align_key,
    controlled_key,
    evaluate_key,
    perf_key,
    pipeline_result,
    publish_key,
    synth_key,
    triplets_key,
)
from .summaries import flow_run_name

route_library_logs()


def stage_perf(cfg: PerfalignConfig, run: RunState) -> dict:
    from .perf import run_build

    out = run.run_dir / "codecontests_perf"
    h, desc = perf_key(cfg, run.run_dir)
    summary = run.run_stage("codecontests_perf", h, desc,
                            lambda: run_build(str(out), cfg.perf, cfg.sandbox, workers=cfg.sandbox.worker_count()))
    if summary.get("failed_batches"):
        raise RuntimeError(f"codecontests_perf: {summary['failed_batches']} batch(es) failed; rerun to retry them")
    return summary


def synth_work(cfg: PerfalignConfig, run: RunState) -> tuple[str, str, Callable[[], dict]]:
    """The synthetic stage's input hash, its input's description and its work."""
    from .synth import generate_synthetic

    out = run.run_dir / "synthetic"
    return *synth_key(cfg, run.run_dir), lambda: generate_synthetic(cfg.synth, str(out), cfg.sandbox)


def stage_synth(cfg: PerfalignConfig, run: RunState) -> dict:
    return run.run_stage("synthetic", *synth_work(cfg, run))


def start_beside(cfg: PerfalignConfig, run: RunState) -> dict[str, tuple[str, str, Callable[[], dict]]]:
    """Stages whose work starts now, beside CodeContests-Perf: the synthetic pairs read nothing of
    it, and the two stages, each a sandbox with idle time between its programs, share the two cores.
    Returns stage -> (input hash, input, the work's result); {} when the run state skips the stage.
    The stage is recorded in its turn (its time there: what was left to wait for)."""
    h, desc, go = synth_work(cfg, run)
    if run.unchanged("synthetic", h):
        return {}
    result: Future = Future()
    context = contextvars.copy_context()  # the pipeline's flow run: the stage's flow is its subflow

    def work() -> None:
        try:
            result.set_result(context.run(go))
        except BaseException as e:  # noqa: BLE001 - raised where the stage is recorded
            result.set_exception(e)

    # a daemon: an interrupted or failed run does not wait for it (its shards are written atomically)
    threading.Thread(target=work, name="synthetic", daemon=True).start()
    return {"synthetic": (h, desc, result.result)}


def stage_controlled(cfg: PerfalignConfig, run: RunState) -> dict:
    """The controlled task measured into its own folder (``triplets.controlled_task``; off: the
    folder and its record go)."""
    from .align import build_controlled_flow

    out, key = run.run_dir / "controlled", controlled_key(cfg, run.run_dir)
    if key is None:
        shutil.rmtree(out, ignore_errors=True)
        if run.data["stages"].pop("controlled", None):
            run.save()
        return NO_CONTROLLED_TASK
    return run.run_stage("controlled", *key, lambda: build_controlled_flow(str(out), cfg.triplets, cfg.sandbox))


def _controlled_dir(cfg: PerfalignConfig, run: RunState) -> str | None:
    return str(run.run_dir / "controlled") if cfg.triplets.controlled_task else None


def stage_triplets(cfg: PerfalignConfig, run: RunState) -> dict:
    from .align import build_triplets_flow as triplets  # a flow of its own in the UI

    cc, syn, out = run.run_dir / "codecontests_perf", run.run_dir / "synthetic", run.run_dir / "triplets"
    return run.run_stage("triplets", *triplets_key(cfg, run.run_dir),
                         lambda: triplets(str(cc), str(syn), str(out), cfg.triplets, _controlled_dir(cfg, run)))


def stage_align(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.alignment.stage_config import TRAINER_DIR

    from .align import align, contest_dirs

    tri, cc, work = run.run_dir / "triplets", run.run_dir / "codecontests_perf", run.run_dir / "align"
    h, desc = align_key(cfg, run.run_dir)
    # an unfinished run of these inputs resumes (its finished trainers kept, the others continue
    # from their checkpoints); changed inputs re-train: the earlier stage directories are replaced
    resume = (run.data["stages"].get("align") or {}).get("input_hash") == h
    if not resume:
        for stale in work.glob(f"*/{TRAINER_DIR}/checkpoint-*"):
            shutil.rmtree(stale, ignore_errors=True)

    def go() -> dict:
        early = pregenerate_beside_align(cfg, run, resume)
        try:
            return align(cfg, str(tri), str(work), contest_dirs(str(cc), _controlled_dir(cfg, run)),
                         stages=list(cfg.align.stages), overwrite=True, resume=resume)
        finally:
            if early:
                early.stop()

    return run.run_stage("align", h, desc, go)


def pregenerate_beside_align(cfg: PerfalignConfig, run: RunState, resume: bool):
    """The evaluation's models generated while align trains (flows/pregenerate.py), when the
    evaluation generates in processes side by side (``eval.parallel_models`` > 1: CPU models; a
    GPU would have to hold a second model beside training); None otherwise."""
    if cfg.eval.parallel_models <= 1:
        return None
    from perfalign.alignment.models import resolve_model
    from perfalign.evaluation.run_models import STAGE_LABELS

    from .pregenerate import Pregeneration

    stages = {s: label for s, label in STAGE_LABELS.items() if s in cfg.align.stages}
    try:  # a model that cannot be resolved fails in align's own checks, with their message
        base = resolve_model(cfg.sft.model_name_or_path) if "sft" in cfg.align.stages else None
    except Exception:  # noqa: BLE001
        base = None
    return Pregeneration(lambda models: _eval_config(cfg, run, models), base, run.run_dir / "align", stages,
                         since=None if resume else time.time())


def eval_config_from(cfg: PerfalignConfig, models: list, codecontests_dir: str | None, tasks: list[str] | None = None,
                     **extra):
    """The [eval] table with a run's models and inputs (``extra``: more of the evaluation's
    fields a command sets, e.g. suite folders; None values ignored). Validated."""
    kw = {k: v for k, v in extra.items() if v is not None}
    if tasks:
        kw["tasks"] = tuple(tasks)
    config = dataclasses.replace(cfg.eval, models=list(models), codecontests_dir=codecontests_dir, **kw)
    config.validate()
    return config


def stage_evaluate(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.evaluation import models_from_run_dir

    from .evaluate import evaluate

    work, out = run.run_dir / "align", run.run_dir / "evaluate"

    def go() -> dict:
        return evaluate(_eval_config(cfg, run, models_from_run_dir(work, prefix="base")), str(out), cfg.sandbox)

    return run.run_stage("evaluate", *evaluate_key(cfg, run.run_dir), go)


def _eval_config(cfg: PerfalignConfig, run: RunState, models: list):
    ctl = str(run.run_dir / "controlled") if "controlled" in cfg.eval.tasks else None
    return eval_config_from(cfg, models, str(run.run_dir / "codecontests_perf"), controlled_dir=ctl)


def stage_publish(cfg: PerfalignConfig, run: RunState) -> dict:
    from perfalign.perfdata.publish import publish_dataset

    pub, key = cfg.publish, publish_key(cfg, run.run_dir)
    if key is None:
        return NOT_PUBLISHED
    src = run.run_dir / "codecontests_perf"
    return run.run_stage("publish", *key, lambda: {"url": publish_dataset(src, pub.repo_id, private=pub.private)})


# A stage: (the config, the run state) -> its summary.
STAGES: list[tuple[str, Callable[[PerfalignConfig, RunState], dict]]] = [
    ("codecontests_perf", stage_perf),
    ("synthetic", stage_synth),
    ("controlled", stage_controlled),
    ("triplets", stage_triplets),
    ("align", stage_align),
    ("evaluate", stage_evaluate),
    ("publish", stage_publish),
]


@flow(name="pipeline", flow_run_name=flow_run_name("pipeline"))
def pipeline(out: str | None = None, config: PerfalignConfig | None = None, profile: str = DEFAULT_PROFILE,
             config_path: str | None = None, overrides: list[str] | None = None, reuse_run_dir: bool = False) -> dict:
    """Run every stage in ``out`` (the run directory; None: ``runs/<profile>``), skipping the
    unchanged ones. A directory made by another profile is refused unless ``reuse_run_dir``.

    ``config``: the typed configuration the CLI built; without it (a scheduled deployment) it is
    built here from ``profile``, ``config_path`` and ``overrides`` (``table.key=value``)."""
    if config is None:
        config = load_config(config_path, profile, list(overrides or []))
    out = out or default_run_dir(config.profile)
    check_run_dir(out, config.profile, reuse_run_dir)
    t0 = time.monotonic()
    run = RunState(out)
    run.data["config"] = config.to_dict()
    run.save()
    early = start_beside(config, run)
    done = {name: run.run_stage(name, *early[name]) if name in early else fn(config, run) for name, fn in STAGES}
    return pipeline_result(run, done, t0)
