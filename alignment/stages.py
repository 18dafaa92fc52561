"""The four stages in run order and how a run wires them: each stage function takes its config
(``STAGE_CONFIGS``; the dataclass defaults are the paper's §VII-C settings, other profiles are
files: config/profiles/*.toml), SFT first (RLPF and DPA start from it; RLPF needs the reward model)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from .dpa import DPAStageConfig, run_dpa
from .reward_model import RewardStageConfig, train_reward_model
from .rlpf import RLPFStageConfig, run_rlpf
from .sft import SFTStageConfig, run_sft
from .stage_config import StageConfig

STAGE_FUNCTIONS = {"sft": run_sft, "reward": train_reward_model, "rlpf": run_rlpf, "dpa": run_dpa}
STAGE_CONFIGS = {"sft": SFTStageConfig, "reward": RewardStageConfig, "rlpf": RLPFStageConfig,
                 "dpa": DPAStageConfig}
STAGE_DIRS = {s: Path(c.output_dir).name for s, c in STAGE_CONFIGS.items()}  # under the run's workdir


def wire(configs: dict[str, StageConfig], data_path: str | Path, workdir: str | Path,
         codecontests_dir: str | Path | None = None) -> dict[str, StageConfig]:
    """The run's paths into the stage configs: every stage reads ``data_path`` (the triplets) and
    writes WORKDIR/<STAGE_DIRS>; RLPF and DPA start from the SFT run, RLPF scores with the reward
    model and executes the contest problems of ``codecontests_dir``."""
    w, d = Path(workdir), str(data_path)
    out = {s: dataclasses.replace(c, data_path=d, output_dir=str(w / STAGE_DIRS[s])) for s, c in configs.items()}
    sft = str(w / STAGE_DIRS["sft"])
    out["rlpf"] = dataclasses.replace(out["rlpf"], model_name_or_path=sft,
                                      reward_model_path=str(w / STAGE_DIRS["reward"]),
                                      codecontests_dir=str(codecontests_dir) if codecontests_dir else None)
    out["dpa"] = dataclasses.replace(out["dpa"], model_name_or_path=sft)
    return out
