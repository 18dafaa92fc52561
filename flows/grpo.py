"""Flow `grpo`: thin Prefect wiring around grpo/ (online GRPO with real-machine GFLOPS rewards
and Staged Quality-Diversity). One Prefect task per arm x seed (coarse: each is minutes of
training; the benchmark workers are a Dask cluster of their own, shared by the runs)."""
from __future__ import annotations

import dataclasses
from typing import Any

from prefect import flow

from perfalign.config.defaults import GRPO_RUN_DIR
from perfalign.grpo.train import GrpoRunConfig  # a flow parameter: Prefect resolves its type

from .env import route_library_logs

route_library_logs()


@flow(name="grpo")
def grpo_flow(out: str, base: "GrpoRunConfig", seeds: list[int] | None = None, arms: list[str] | None = None) -> dict:
    """Run the arms for the seeds and write rollouts (Parquet), archives, report and figures."""
    from perfalign.grpo.experiment import ARMS, run_experiment

    return run_experiment(dataclasses.replace(base, out_dir=out), out, list(seeds or [0]), tuple(arms or ARMS))


def grpo_command(*, out: str = str(GRPO_RUN_DIR), seeds: list[int] | None = None, arms: list[str] | None = None,
                 profile: str | None = None, config: str | None = None, overrides: list[str] = (),
                 **settings: Any) -> dict:
    """`perfalign grpo`: online GRPO whose rewards are GFLOPS measured on Dask benchmark workers.
    Its settings are the configuration's [grpo] table (`perfalign config` shows them; the
    production profile: a 14B coder writes free C for DGEMM + PolyBench on a GPU), with
    ``settings`` on top (a [grpo] key each, e.g. ``steps_per_stage=3``, ``**{"tiers.ok_reward":
    "peak_fraction"}``; None values ignored). Arms: sqd (staged QD), grpo (all techniques),
    control (learning rate 0); each runs once per seed from the same warm start."""
    from perfalign.config.tables import load_config

    cfg = load_config(config, profile, list(overrides), flags={f"grpo.{k}": v for k, v in settings.items()})
    return grpo_flow(out=out, base=dataclasses.replace(cfg.grpo, sandbox=cfg.sandbox), seeds=list(seeds or [0]),
                     arms=list(arms) if arms else None)
