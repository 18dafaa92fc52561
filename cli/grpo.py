"""`perfalign grpo`: online GRPO with measured rewards."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from perfalign.config.defaults import GRPO_RUN_DIR

from .app import (
    _fail,
    _failing,
    _str,
    app,
    console,
)
from .options import ConfigArgs, config_options


@app.command("grpo")
@config_options("grpo.steps_per_stage", "grpo.steps", "grpo.schedule", "grpo.num_generations", "grpo.n_workers",
                "grpo.cpus_per_worker", "grpo.dask_address", "grpo.polybench_dir", "grpo.tasks", "grpo.model",
                "grpo.learning_rate", "grpo.warmup_steps", "grpo.warmup_prior", "grpo.tiers.ok_reward",
                "grpo.reuse_measurements")
def grpo_cmd(
    out: Path = typer.Option(GRPO_RUN_DIR, "--out",
                             help="Run directory: per-arm rollouts (Parquet), archive, report, figures."),
    conf: ConfigArgs = None,
    seeds: str = typer.Option("0", "--seeds", help="Comma-separated seeds (each arm runs once per seed)."),
    arms: Optional[str] = typer.Option(None, "--arms", help="Comma-separated: sqd, grpo, control (default: all)."),
) -> None:
    """Online GRPO with rewards measured in GFLOPS on Dask benchmark workers, and staged
    quality-diversity (docs/grpo.md). Settings: the grpo table of `perfalign config`."""
    from perfalign.flows.grpo import grpo_command

    try:
        seed_list = [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        _fail(f"--seeds {seeds!r}: expected comma-separated integers")
    with _failing(ValueError, FileNotFoundError):
        result = grpo_command(out=str(out), seeds=seed_list, arms=[x.strip() for x in arms.split(",") if x.strip()]
                              if arms else None, profile=conf.profile, config=_str(conf.config), overrides=conf.sets,
                              **{k.split(".", 1)[1]: v for k, v in conf.flags.items()})
    console.print(json.dumps(result, indent=1, default=str)[:4000])
