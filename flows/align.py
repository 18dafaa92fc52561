"""Flows `build_controlled_flow`, `build_triplets_flow` and `align`: thin Prefect wiring around
perfdata.controlled, perfdata.triplets and alignment/ (controlled task + triplets -> SFT -> RM ->
RLPF, and SFT -> DPA)."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from perfalign.alignment.stages import STAGES  # the stage table: names in run order, DAG, folders
from perfalign.common.progress import listening, report
from perfalign.config.tables import (  # flow parameters: Prefect resolves their types
    PerfalignConfig,
    TripletSettings,
)
from perfalign.sandbox import SandboxSettings  # a flow parameter, as the config tables above

from .env import route_library_logs
from .summaries import flow_run_name, publish_stage, run_label

route_library_logs()

SETUP = "align: set-up (libraries, inputs)"


def controlled(out: str, settings: "TripletSettings", sandbox: SandboxSettings = SandboxSettings()) -> dict:
    """The controlled task (perfdata.controlled) measured into OUT, in the [sandbox]: its
    CodeContests-Perf tables (RLPF's tests), its triplets and SFT rows, and its held-out instances
    (the evaluation's)."""
    from perfalign.perfdata.controlled import build_controlled_task
    from perfalign.sandbox import Sandbox

    task = build_controlled_task(out, sandbox=Sandbox.from_settings(sandbox), copies=settings.controlled_copies,
                                 repeats=settings.controlled_repeats)
    return {"dir": str(task.root), "train_instances": len(task.train), "heldout_instances": len(task.heldout)}


@flow(name="build_controlled", flow_run_name=flow_run_name("controlled"))
def build_controlled_flow(out: str, settings: "TripletSettings", sandbox: SandboxSettings = SandboxSettings()) -> dict:
    t0 = time.monotonic()
    summary = task(controlled, name="controlled", task_run_name="controlled task measured")(out, settings, sandbox)
    publish_stage(run_label(out), "controlled", summary, time.monotonic() - t0)
    return summary


def triplets(codecontests_dir: str | None, synthetic_dir: str | None, out: str, settings: "TripletSettings",
             controlled_dir: str | None = None) -> dict:
    """The triplets of the two datasets and, from ``controlled_dir`` (the controlled stage's
    folder), the controlled task's training rows (``settings.controlled_pairs``), whose held-out
    prompts the evaluation scores. A rebuild drops the rows of an earlier one."""
    from perfalign.perfdata.controlled import add_to_triplets, load_controlled_task
    from perfalign.perfdata.triplets import build_triplets

    res = build_triplets(out, codecontests_dir=codecontests_dir, synthetic_dir=synthetic_dir,
                         config=settings.triplet_config())
    stats = res.stats
    if controlled_dir:
        ctl = load_controlled_task(controlled_dir)
        added = add_to_triplets(ctl, out, pairs=settings.controlled_pairs)
        stats = {**stats, "controlled_task": {"dir": str(ctl.root), "added_rows": added,
                                              "train_instances": len(ctl.train),
                                              "heldout_instances": len(ctl.heldout)}}
    return {"out": str(res.out_dir), "stats": stats}


def contest_dirs(codecontests_dir: str | None, controlled_dir: str | None) -> str | list[str] | None:
    """The CodeContests-Perf folders whose tests RLPF executes: the run's and, with the controlled
    task's rows in the triplets, the controlled task's (its RL prompts)."""
    if not controlled_dir:
        return codecontests_dir
    from perfalign.perfdata.controlled import load_controlled_task

    ctl = str(load_controlled_task(controlled_dir).codecontests_dir)
    return [*([codecontests_dir] if codecontests_dir else []), ctl]


@flow(name="build_triplets", flow_run_name=flow_run_name("triplets"))
def build_triplets_flow(codecontests_dir: str | None, synthetic_dir: str | None, out: str,
                        settings: "TripletSettings", controlled_dir: str | None = None) -> dict:
    t0 = time.monotonic()
    summary = task(triplets, name="triplets", task_run_name="triplets and SFT prompts")(
        codecontests_dir, synthetic_dir, out, settings, controlled_dir)
    publish_stage(run_label(out), "triplets", summary, time.monotonic() - t0)
    return summary


def stage_configs(cfg: "PerfalignConfig", triplets_dir: str, workdir: str,
                  codecontests_dir: str | list[str] | None, overwrite: bool = False) -> dict:
    """The four stage configs of the configuration ([sft], [reward], [rlpf], [dpa]; the base
    model linked from [align], RLPF's sandbox the [sandbox] settings) wired to this run's paths
    (``codecontests_dir``: RLPF's contest folders, ``contest_dirs``)."""
    from perfalign.alignment.stages import wire

    configs = wire({s: getattr(cfg, s) for s in STAGES}, triplets_dir, workdir, codecontests_dir)
    configs["rlpf"] = dataclasses.replace(configs["rlpf"], sandbox=cfg.sandbox)
    return {k: dataclasses.replace(v, overwrite=overwrite) for k, v in configs.items()}


@task(task_run_name="train {stage}", cache_policy=NO_CACHE)  # the run state decides what reruns
def train_stage(stage: str, config, own_process: bool = False, stop: "threading.Event | None" = None) -> dict:
    """One stage; with ``own_process``, in a child interpreter (its logs and progress relayed
    here; setting ``stop`` ends it), so that two stages train on two cores at once."""
    with _setup_progress(stage):
        if own_process:
            from perfalign.common.child_process import call_in_child

            res = call_in_child(STAGES[stage].run, config, stop=stop)
        else:
            res = STAGES[stage].run(config)
    return {"run_dir": str(res.run_dir), "metrics": res.metrics}


@contextlib.contextmanager
def _setup_progress(stage: str):
    """A trainer's set-up (its libraries, model, data; a minute on a loaded CPU) as a progress
    report of its own, done when the trainer reports its first step."""
    what, steps, done = f"align: {stage} set-up (model, data)", f"align: {stage} steps", threading.Event()

    def first_step(w: str, _done: int, _total: int) -> None:
        if w == steps and not done.is_set():
            done.set()
            report(what, 1, 1)

    report(what, 0, 1)
    with listening(first_step):
        yield


def _train_in_dag_order(wanted: list[str], configs: dict, parallel: int) -> dict[str, dict]:
    """Each stage once its ``needs`` among ``wanted`` are done, at most ``parallel`` at once (each in
    a process of its own when more than one may run); the first failure stops the rest."""
    if parallel <= 1:
        return {s: train_stage(s, configs[s]) for s in STAGES if s in wanted}
    from prefect.futures import wait

    pending = [s for s in STAGES if s in wanted]
    stop = threading.Event()
    running: dict[str, object] = {}
    results: dict[str, dict] = {}
    try:
        while pending or running:
            for s in [s for s in pending if all(d in results or d not in wanted for d in STAGES[s].upstream)]:
                if len(running) < parallel:
                    pending.remove(s)
                    running[s] = train_stage.submit(s, configs[s], own_process=True, stop=stop)
            if not running:
                raise RuntimeError(f"stages {pending} wait on stages that did not run")  # unreachable: needs are a DAG
            # one running: nothing else can start before it ends; more: look again each second
            done = wait(list(running.values()), timeout=None if len(running) == 1 else 1.0).done
            for s, fut in list(running.items()):
                if fut in done:
                    del running[s]
                    results[s] = fut.result()  # raises the stage's own error
    finally:
        stop.set()  # a failed stage (or an interrupt): the others end now, not when done
        if running:
            wait(list(running.values()), timeout=30)
    return {s: results[s] for s in STAGES if s in results}


@flow(name="align", flow_run_name=flow_run_name("align", "workdir"))
def align(cfg: "PerfalignConfig", triplets_dir: str, workdir: str,
          codecontests_dir: str | list[str] | None = None, stages: list[str] | None = None, overwrite: bool = False,
          configs: dict | None = None, resume: bool = False) -> dict:
    """SFT -> reward model -> RLPF, and SFT -> DPA. Every config is validated before any training;
    ``configs``: stage configs a caller already built and checked with ``preflight`` (the CLI,
    which fails before Prefect starts), else built and checked here. ``resume`` (an unfinished
    run of the same inputs): a stage already finished with the same config is kept, not retrained."""
    wanted = list(stages or STAGES)
    unknown = set(wanted) - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stages {sorted(unknown)}; choose from {', '.join(STAGES)}")
    if configs is None:
        report(SETUP, 0, 1 + len(wanted))  # the stage configs import the training libraries
        configs = stage_configs(cfg, triplets_dir, workdir, codecontests_dir, overwrite)
        preflight(configs, wanted, triplets_dir, codecontests_dir, workdir)
    t0 = time.monotonic()
    kept = _finished(configs, wanted) if resume else {}
    trained = _train_in_dag_order([s for s in wanted if s not in kept], configs,
                                  cfg.align.parallel_stages)  # tasks: each shows in the UI
    results = {s: {**kept, **trained}[s] for s in STAGES if s in kept or s in trained}
    publish_stage(run_label(workdir), "align", results, time.monotonic() - t0)
    return results


def _finished(configs: dict, wanted: list[str]) -> dict[str, dict]:
    from perfalign.alignment.stage_config import finished_run

    done = {s: finished_run(configs[s]) for s in wanted}
    return {s: {"run_dir": str(r.run_dir), "metrics": r.metrics, "kept": True} for s, r in done.items() if r}


def preflight(configs: dict, wanted: list[str], triplets_dir: str, codecontests_dir: str | list[str] | None,
              workdir: str) -> None:
    """Bad inputs (empty splits, missing solutions, missing models or upstream stages) raise a
    clear error here, before any model is loaded or trained. Reported as progress (``SETUP``):
    the training libraries' import and the inputs' reads take about a minute on a loaded CPU."""
    steps = 1 + len(wanted)  # the libraries, then each stage's checks
    report(SETUP, 0, steps)
    from perfalign.alignment.data import load_sft_rows, load_triplet_rows
    from perfalign.alignment.models import check_model_reference
    from perfalign.perfdata.shards import shard_files

    report(SETUP, 1, steps)
    for i, s in enumerate(wanted, start=2):
        configs[s].validate()
        for dep in STAGES[s].upstream:
            if dep not in wanted and not (Path(workdir) / STAGES[dep].dir / "metrics.json").exists():
                raise ValueError(f"stage {s!r} needs {dep!r}: run it too or keep its output in {workdir}")
        if not STAGES[s].needs:
            check_model_reference(configs[s].model_name_or_path, f"{s} base model")
        if s == "sft":
            load_sft_rows(triplets_dir, "train")
            load_sft_rows(triplets_dir, "eval")
        else:  # every stage reports its metric on its own eval split
            load_triplet_rows(triplets_dir, tuple(configs[s].train_splits), what=f"{s} train")
            load_triplet_rows(triplets_dir, tuple(configs[s].eval_splits), what=f"{s} eval")
        report(SETUP, i, steps)
    if "rlpf" in wanted:
        cc = configs["rlpf"].codecontests_dir
        for d in ([cc] if isinstance(cc, str) else cc or []):
            if not shard_files(d, "submissions"):
                raise FileNotFoundError(f"RLPF: CodeContests-Perf directory {d} has no submissions table")
