"""Wired-together stage configs: the paper's production settings and the embedded (tiny model,
2 CPU cores) profile. Each returns {"sft", "reward", "rlpf", "dpa"} in run order; the
stage functions (``STAGE_FUNCTIONS``) take them one by one, SFT first (RLPF and DPA start from
it; RLPF needs the reward model)."""
from __future__ import annotations

from pathlib import Path

from .common import StageConfig
from .dpa import DPAStageConfig, run_dpa
from .models import EMBEDDED, PRODUCTION_BASE_MODEL
from .reward_model import RewardStageConfig, train_reward_model
from .rlpf import RLPFStageConfig, run_rlpf
from .sft import SFTStageConfig, run_sft

STAGE_FUNCTIONS = {"sft": run_sft, "reward": train_reward_model, "rlpf": run_rlpf, "dpa": run_dpa}
STAGE_CONFIGS = {"sft": SFTStageConfig, "reward": RewardStageConfig, "rlpf": RLPFStageConfig,
                 "dpa": DPAStageConfig}


def _wire(make, data_path: str | Path, workdir: str | Path, codecontests_dir: str | Path | None, base_model: str,
          overrides: dict[str, dict] | None) -> dict[str, StageConfig]:
    w, o = Path(workdir), overrides or {}
    d, cc = str(data_path), (str(codecontests_dir) if codecontests_dir else None)
    return {
        "sft": make("sft", model_name_or_path=base_model, data_path=d, output_dir=str(w / "sft"), **o.get("sft", {})),
        "reward": make("reward", model_name_or_path=base_model, data_path=d,
                       output_dir=str(w / "reward_model"), **o.get("reward", {})),
        "rlpf": make("rlpf", model_name_or_path=str(w / "sft"), reward_model_path=str(w / "reward_model"), data_path=d,
                     codecontests_dir=cc, output_dir=str(w / "rlpf"), **o.get("rlpf", {})),
        "dpa": make("dpa", model_name_or_path=str(w / "sft"), data_path=d, output_dir=str(w / "dpa"), **o.get("dpa", {})),
    }


def production_profile(data_path, workdir, codecontests_dir=None, base_model: str = PRODUCTION_BASE_MODEL,
                       overrides: dict[str, dict] | None = None) -> dict[str, StageConfig]:
    """The paper's hyper-parameters (§VII-C) around ``base_model`` (Deepseek-Coder 6.7B)."""
    return _wire(lambda s, **kw: STAGE_CONFIGS[s](**kw), data_path, workdir, codecontests_dir, base_model, overrides)


def embedded_profile(data_path, workdir, codecontests_dir=None, base_model: str = EMBEDDED,
                     overrides: dict[str, dict] | None = None) -> dict[str, StageConfig]:
    """The tiny locally built model on the CPU: fp32, one thread, larger learning rates."""
    return _wire(lambda s, **kw: STAGE_CONFIGS[s].embedded(**kw), data_path, workdir, codecontests_dir, base_model,
                 overrides)
