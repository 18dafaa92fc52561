"""The alignment stages, written once: each stage's config dataclass (its defaults are the
paper's §VII-C settings, other profiles are files: config/profiles/*.toml), its function, what
it starts from (the DAG) and its folder under a run's workdir. SFT first: RLPF and DPA start
from it, RLPF also scores with the reward model."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .dpa import DPAStageConfig, run_dpa
from .reward_model import RewardStageConfig, train_reward_model
from .rlpf import RLPFStageConfig, run_rlpf
from .sft import SFTStageConfig, run_sft
from .stage_config import StageConfig


@dataclass(frozen=True)
class Stage:
    name: str
    config: type[StageConfig]
    run: Callable
    needs: tuple[tuple[str, str], ...]  # (config field, the stage whose folder it reads): the DAG
    dir: str                            # its folder under the run's workdir

    @property
    def upstream(self) -> tuple[str, ...]:
        return tuple(stage for _, stage in self.needs)


# in run order
STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("sft", SFTStageConfig, run_sft, (), "sft"),
    Stage("reward", RewardStageConfig, train_reward_model, (), "reward_model"),
    Stage("rlpf", RLPFStageConfig, run_rlpf, (("model_name_or_path", "sft"), ("reward_model_path", "reward")), "rlpf"),
    Stage("dpa", DPAStageConfig, run_dpa, (("model_name_or_path", "sft"),), "dpa"),
)}


def wire(configs: dict[str, StageConfig], data_path: str | Path, workdir: str | Path,
         codecontests_dir: str | Path | list[str] | None = None) -> dict[str, StageConfig]:
    """The run's paths into the stage configs: every stage reads ``data_path`` (the triplets) and
    writes WORKDIR/<its dir>, reads its ``needs`` from their folders, and a stage that executes
    contest problems (RLPF) takes ``codecontests_dir`` (one folder or several)."""
    w, d = Path(workdir), str(data_path)
    cc = [str(p) for p in codecontests_dir] if isinstance(codecontests_dir, list) else \
        str(codecontests_dir) if codecontests_dir else None
    out = {}
    for s, c in configs.items():
        paths = {f: str(w / STAGES[dep].dir) for f, dep in STAGES[s].needs}
        if any(f.name == "codecontests_dir" for f in dataclasses.fields(c)):
            paths["codecontests_dir"] = cc
        out[s] = dataclasses.replace(c, data_path=d, output_dir=str(w / STAGES[s].dir), **paths)
    return out
