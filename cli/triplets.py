"""`perfalign triplets build`: the triplets and SFT prompts."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .app import (
    _CONTROLLED_HELP,
    _fail,
    _failing,
    _group,
    _load_config,
    _session,
    _str,
    console,
)
from .options import ConfigArgs, config_options

triplets_app = _group("triplets", "Stratified (problem, fast, slow) triplets and SFT prompts (paper §VII-B).")


@triplets_app.command("build")
@config_options("triplets.seed", "triplets.max_margin", "triplets.held_out_count", "triplets.small_groups",
                "triplets.min_group_solutions", "triplets.controlled_pairs")
def triplets_build(
    out: Path = typer.Option(..., "--out", help="Output directory (triplets, sft_prompts, stats.json)."),
    codecontests: Optional[Path] = typer.Option(None, "--codecontests", help="A CodeContests-Perf directory."),
    synthetic: Optional[Path] = typer.Option(None, "--synthetic", help="A synthetic-pairs directory."),
    controlled: Optional[Path] = typer.Option(None, "--controlled",
                                              help=_CONTROLLED_HELP + ": its training rows join."),
    conf: ConfigArgs = None,
) -> None:
    """Build triplets with the adaptive margin and the SFT prompts; no problem crosses splits.
    Unset options take the profile's values from the config file."""
    if not codecontests and not synthetic:
        _fail("give --codecontests, --synthetic, or both")
    for p in (codecontests, synthetic, controlled):
        if p and not p.is_dir():
            _fail(f"{p} is not a directory")
    settings = _load_config(conf).triplets
    from perfalign.flows.align import build_triplets_flow

    with _failing(ValueError, FileNotFoundError), _session():
        res = build_triplets_flow(_str(codecontests), _str(synthetic), str(out), settings, _str(controlled))
    console.print(json.dumps({k: v for k, v in res["stats"].items()
                              if k in ("totals", "triplets", "margin", "languages")}))
    console.print(f"triplets -> {out}")
