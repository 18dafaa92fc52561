"""`perfalign align` and `perfalign train STAGE`: the alignment stages."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .app import (
    _CONTROLLED_HELP,
    _OLD_NAME,
    _failing,
    _group,
    _load_config,
    _renamed,
    _session,
    _str,
    app,
    console,
)
from .options import ConfigArgs, config_options

train_app = _group("train", "Train one alignment stage: sft, reward, rlpf or dpa.")


_TRIPLETS_OPT = typer.Option(..., "--triplets", help="Triplets directory (perfalign triplets build).")
_ALIGN_OUT_OPT = typer.Option(None, "--out", help="Output directory: one subdirectory per stage.")
_CC_OPT = typer.Option(None, "--codecontests",
                       help="CodeContests-Perf directory (RLPF executes contest problems' tests).")
_ALIGN_CONTROLLED_OPT = typer.Option(None, "--controlled", help=_CONTROLLED_HELP + ": RLPF executes its tests "
                                     "(triplets built with its rows).")
_OVERWRITE_OPT = typer.Option(False, "--overwrite", help="Replace a finished stage directory.")


def _align_command(stages: Optional[list[str]], *keys: str):
    """`perfalign align` (``stages`` None: the configured ones) or `perfalign train STAGE`."""
    @config_options(*keys)
    def command(triplets: Path = _TRIPLETS_OPT, out: Optional[Path] = _ALIGN_OUT_OPT,
                codecontests: Optional[Path] = _CC_OPT, controlled: Optional[Path] = _ALIGN_CONTROLLED_OPT,
                conf: ConfigArgs = None, overwrite: bool = _OVERWRITE_OPT,
                workdir: Optional[Path] = typer.Option(None, "--workdir", **_OLD_NAME)) -> None:
        from perfalign.flows.align import align, contest_dirs, preflight, stage_configs

        workdir = _renamed(out, workdir, "--out")
        cfg = _load_config(conf)
        wanted = stages or list(cfg.align.stages)
        bad_input = (ValueError, FileNotFoundError, FileExistsError)
        with _failing(*bad_input):  # bad inputs fail here, before Prefect starts or any model loads (and only here)
            cc = contest_dirs(_str(codecontests), _str(controlled))
            configs = stage_configs(cfg, str(triplets), str(workdir), cc, overwrite)
            preflight(configs, wanted, str(triplets), cc, str(workdir))
        with _failing(*bad_input), _session():
            results = align(cfg, str(triplets), str(workdir), cc, wanted, overwrite, configs=configs)
        t = Table("stage", "metrics", "run directory")
        for stage, r in results.items():
            m = {k: round(v, 4) if isinstance(v, float) else v for k, v in r["metrics"].items()
                 if k.startswith("eval_")}
            t.add_row(stage, json.dumps(m), r["run_dir"])
        console.print(t)

    return command


_TRAIN_HELP = {
    "sft": "Supervised fine-tuning on the instruction/optimization prompts; reports perplexity (Eq. 1).",
    "reward": "Reward model with the adaptive-margin loss (Eq. 2); reports accuracy (Eq. 5).",
    "rlpf": "PPO from the SFT model with the performance reward (Eq. 4, KL 0.1); needs sft and reward in --out.",
    "dpa": "Direct performance alignment: DPO with the adaptive margin (Eq. 7, beta 0.6); needs sft in --out.",
}
for _stage, _help in _TRAIN_HELP.items():
    train_app.command(_stage, help=_help)(_align_command([_stage], "align.base_model"))
app.command("align", help="The flow `align`: SFT -> RM -> RLPF, and SFT -> DPA (the stages' hyperparameters: the sft,\n"
                          "reward, rlpf and dpa tables of `perfalign config`).")(
    _align_command(None, "align.base_model", "align.stages", "align.parallel_stages"))
