"""The models an alignment run produced and their fine-tuning metrics (paper §VIII-A).

A stage's run directory (alignment.stage_config.save_stage) holds the model, ``stage_config.json`` and
``metrics.json``. We read: SFT eval perplexity (Eq. 1), reward-model eval accuracy (Eq. 5, from
the reward model RLPF used), RLPF eval mean reward and KL, DPA eval accuracy (Eq. 8).
"""
from __future__ import annotations

import json
from pathlib import Path

from perfalign.alignment.stage_config import METRICS_FILE, STAGE_CONFIG_FILE

from .config import ModelSpec

STAGE_LABELS = {"sft": "+SFT", "rlpf": "+RLPF", "dpa": "+DPA"}
# stage -> {our name: the name in its metrics.json}
STAGE_METRICS = {"sft": {"perplexity": "eval_perplexity"}, "rlpf": {"mean_reward": "eval_mean_reward", "kl": "eval_kl"},
                 "dpa": {"dpa_accuracy": "eval_accuracy"}, "reward_model": {"rm_accuracy": "eval_accuracy"}}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _resolve(ref: str, near: Path) -> Path | None:
    """A path recorded in a stage config: as written (relative to where training ran), else
    next to the run directory that recorded it."""
    for p in (Path(ref), near.parent / Path(ref).name):
        if (p / METRICS_FILE).is_file():
            return p
    return None


def finetune_metrics(model_ref: str) -> dict:
    """{stage, run_dir, <metric>: value} of a stage run directory; {} for anything else (a
    base model, a Hub name, an oracle)."""
    d = Path(model_ref)
    cfg = _read_json(d / STAGE_CONFIG_FILE)
    metrics = _read_json(d / METRICS_FILE)
    if not cfg.get("stage") or not metrics:
        return {}
    from perfalign.alignment.stages import STAGES  # the training libraries: only for a stage's folder

    stage = {s.config.__name__: s.dir for s in STAGES.values()}.get(cfg["stage"])
    if not stage:
        return {}
    out: dict = {"stage": stage, "run_dir": str(d), **{k: metrics.get(m) for k, m in STAGE_METRICS[stage].items()}}
    rm = _resolve(cfg["reward_model_path"], d) if stage == "rlpf" and cfg.get("reward_model_path") else None
    if rm is not None:  # RLPF's reward model: the one it used
        out["rm_accuracy"] = _read_json(rm / METRICS_FILE).get("eval_accuracy")
    return out


def models_from_run_dir(workdir: str | Path, prefix: str = "base") -> list[ModelSpec]:
    """The base model and the SFT, RLPF and DPA models of an alignment run directory (the
    layout of alignment.stages: WORKDIR/{sft,reward_model,rlpf,dpa}), those that finished.
    Labels: ``prefix``, ``prefix+SFT``, ... (the paper's DS, DS+SFT, DS+RLPF, DS+DPA)."""
    w = Path(workdir)
    if not w.is_dir():
        raise FileNotFoundError(f"alignment run directory {w} does not exist")
    models: list[ModelSpec] = []
    sft_cfg = _read_json(w / "sft" / STAGE_CONFIG_FILE)
    if sft_cfg.get("model_name_or_path"):
        models.append(ModelSpec(prefix, embedded_base_of(str(sft_cfg["model_name_or_path"]), w / "sft")))
    for stage, label in STAGE_LABELS.items():
        if (w / stage / METRICS_FILE).is_file():
            models.append(ModelSpec(("" if prefix == "base" else prefix) + label, str(w / stage)))
    if not models:
        raise FileNotFoundError(f"no finished stage (sft/rlpf/dpa with {METRICS_FILE}) under {w}")
    return models


def embedded_base_of(ref: str, stage_dir: Path) -> str:
    """The exact tiny model a stage started from. ``embedded`` names a model built from the
    current data/ tree, which changes whenever data/ does; the stage saved the tokenizer it was
    trained with, so pick the cached tiny model with the same vocabulary and merges. Other
    references (Hub names, directories), or no match, are returned unchanged."""
    from perfalign.alignment.models import EMBEDDED, cached_tiny_model

    found = cached_tiny_model(stage_dir / "tokenizer.json") if ref == EMBEDDED else None
    return str(found) if found else ref
