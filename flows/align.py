"""Flows `build_triplets_flow` and `align`: thin Prefect wiring around perfdata.triplets and
alignment/ (triplets -> SFT -> RM -> RLPF, and SFT -> DPA)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from .env import configure_prefect

configure_prefect()

from prefect import flow, task  # noqa: E402

STAGES = ("sft", "reward", "rlpf", "dpa")
# What each stage starts from (the DAG): RLPF needs the SFT policy and the reward model.
NEEDS = {"sft": (), "reward": (), "rlpf": ("sft", "reward"), "dpa": ("sft",)}


def triplets(codecontests_dir: str | None, synthetic_dir: str | None, out: str, seed: int = 0,
             max_margin: float = 3.0, held_out_count: int = 0) -> dict:
    from perfdata.triplets import TripletConfig, build_triplets

    res = build_triplets(out, codecontests_dir=codecontests_dir, synthetic_dir=synthetic_dir,
                         config=TripletConfig(seed=seed, max_margin=max_margin, held_out_count=held_out_count or None))
    return {"out": str(res.out_dir), "stats": res.stats}


@flow(name="build_triplets")
def build_triplets_flow(codecontests_dir: str | None, synthetic_dir: str | None, out: str, seed: int = 0,
                        max_margin: float = 3.0, held_out_count: int = 0) -> dict:
    return task(triplets, name="triplets")(codecontests_dir, synthetic_dir, out, seed, max_margin, held_out_count)


def stage_configs(profile: str, triplets_dir: str, workdir: str, codecontests_dir: str | None,
                  base_model: str | None = None, overwrite: bool = False) -> dict:
    """The four stage configs of a profile ("production": paper §VII-C; "embedded": tiny model)."""
    from alignment.profiles import embedded_profile, production_profile

    if profile not in ("production", "embedded"):
        raise ValueError(f"unknown alignment profile {profile!r} (production or embedded)")
    make = embedded_profile if profile == "embedded" else production_profile
    kwargs = {"base_model": base_model} if base_model and base_model != "embedded" else {}
    configs = make(triplets_dir, workdir, codecontests_dir, **kwargs)
    return {k: dataclasses.replace(v, overwrite=overwrite) for k, v in configs.items()}


@task(task_run_name="train {stage}")
def train_stage(stage: str, config) -> dict:
    from alignment.profiles import STAGE_FUNCTIONS

    res = STAGE_FUNCTIONS[stage](config)
    return {"run_dir": str(res.run_dir), "metrics": res.metrics}


@flow(name="align")
def align(triplets_dir: str, workdir: str, codecontests_dir: str | None = None, profile: str = "embedded",
          base_model: str | None = None, stages: list[str] | None = None, overwrite: bool = False) -> dict:
    """SFT -> reward model -> RLPF, and SFT -> DPA. Every config is validated before any training."""
    wanted = list(stages or STAGES)
    unknown = set(wanted) - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stages {sorted(unknown)}; choose from {', '.join(STAGES)}")
    configs = stage_configs(profile, triplets_dir, workdir, codecontests_dir, base_model, overwrite)
    preflight(configs, wanted, triplets_dir, codecontests_dir, workdir)
    results: dict[str, dict] = {}
    for s in STAGES:  # in DAG order; tasks so each shows in the Prefect UI
        if s in wanted:
            results[s] = train_stage(s, configs[s])
    return results


def _dir(stage: str) -> str:
    return "reward_model" if stage == "reward" else stage


def preflight(configs: dict, wanted: list[str], triplets_dir: str, codecontests_dir: str | None, workdir: str) -> None:
    """Bad inputs (empty splits, missing solutions, missing models or upstream stages) raise a
    clear error here, before any model is loaded or trained."""
    from alignment.data import load_sft_rows, load_triplet_rows
    from alignment.models import check_model_reference

    for s in wanted:
        configs[s].validate()
        for dep in NEEDS[s]:
            if dep not in wanted and not (Path(workdir) / _dir(dep) / "metrics.json").exists():
                raise ValueError(f"stage {s!r} needs {dep!r}: run it too or keep its output in {workdir}")
        if not NEEDS[s]:
            check_model_reference(configs[s].model_name_or_path, f"{s} base model")
    if "sft" in wanted:
        load_sft_rows(triplets_dir, "train")
        load_sft_rows(triplets_dir, "eval")
    for s in set(wanted) - {"sft"}:  # every stage reports its metric on its own eval split
        load_triplet_rows(triplets_dir, tuple(configs[s].train_splits), what=f"{s} train")
        load_triplet_rows(triplets_dir, tuple(configs[s].eval_splits), what=f"{s} eval")
    if "rlpf" in wanted:
        if codecontests_dir and not Path(codecontests_dir, "data").is_dir():
            raise FileNotFoundError(f"RLPF: CodeContests-Perf directory {codecontests_dir} has no data/")
