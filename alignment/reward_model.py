"""Stage 2: the reward model r_theta of RLPF (§V-B, §VII-C2): a one-logit sequence classifier
trained with TRL's RewardTrainer on D_reward; its ``margin`` column is mu (Eq. 3), which makes
TRL's loss exactly Eq. 2. Metric: Eq. 5 on D_reward's eval split (paper: 93 %)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from perfalign.common.equations import DEFAULT_MAX_MARGIN, reward_accuracy, reward_model_loss

from .data import preference_splits
from .models import PRODUCTION_BASE_MODEL, check_model_reference, load_sequence_classifier, load_tokenizer
from .prompting import PAIR_KEYS, fit_rows
from .stage_config import (
    StageConfig,
    StageResult,
    group_pairs_by_length,
    last_logged,
    prepare_process,
    report_steps,
    save_stage,
    train_resumable,
)


@dataclass
class PreferenceStageConfig(StageConfig):
    """A stage trained on the triplets' preference pairs (reward model, DPA), with Eq. 3's margin mu."""

    max_margin: float = DEFAULT_MAX_MARGIN  # lambda of Eq. 3 (mu is recomputed from the runtimes)
    use_margin: bool = True                 # False: mu = 0 (plain Eq. 2 / plain DPO: the ablation)


@dataclass
class RewardStageConfig(PreferenceStageConfig):
    """Paper: the SFT hyper-parameters (lr 1.41e-5, bf16, global batch 64) for 1 epoch, from the
    Deepseek-Coder base, lambda = 3."""

    trl_config = "trl:RewardConfig"

    model_name_or_path: str = PRODUCTION_BASE_MODEL  # the base of r_theta (a new one-logit head)
    output_dir: str = "runs/reward_model"
    gradient_accumulation_steps: int = 16
    train_splits: tuple[str, ...] = ("reward_train",)  # D_reward's training splits of the triplets
    eval_splits: tuple[str, ...] = ("reward_eval",)    # ... and its evaluation splits


def preference_inputs(cfg: PreferenceStageConfig, what: str, model_what: str) -> tuple[object, list, list, int]:
    """What a preference stage (reward model, DPA) trains on, checked before any model is loaded:
    (tokenizer, train pairs, eval pairs, rows dropped), the prompts rendered for the model and
    shortened to fit ``max_length`` (chat template, statement shortened)."""
    cfg.validate()
    check_model_reference(cfg.model_name_or_path, model_what)
    train, evals = preference_splits(cfg, what)
    prepare_process(cfg)
    tokenizer = load_tokenizer(cfg.model_name_or_path)
    train, dropped = fit_rows(tokenizer, train, cfg.max_length, PAIR_KEYS)
    evals, dropped_eval = fit_rows(tokenizer, evals, cfg.max_length, PAIR_KEYS)
    if not train or not evals:
        raise ValueError(f"{what}: no train or eval pair fits max_length={cfg.max_length}")
    return tokenizer, train, evals, dropped + dropped_eval


def evaluate_reward_model(model, tokenizer, pairs: list[dict], batch_size: int = 8,
                          max_length: int | None = None) -> dict:
    """Eq. 5 (and the Eq. 2 loss) of a reward model on prompt/chosen/rejected/margin records."""
    import torch

    from .scoring import reward_scores

    prompts = [p["prompt"] for p in pairs]
    r_fast = reward_scores(model, tokenizer, prompts, [p["chosen"] for p in pairs], batch_size, max_length)
    r_slow = reward_scores(model, tokenizer, prompts, [p["rejected"] for p in pairs], batch_size, max_length)
    margins = torch.tensor([p["margin"] for p in pairs], dtype=torch.float32)
    return {"accuracy": reward_accuracy(r_fast, r_slow), "loss": float(reward_model_loss(r_fast, r_slow, margins)),
            "mean_reward_gap": float((r_fast - r_slow).mean())}


def train_reward_model(cfg: RewardStageConfig) -> StageResult:
    """Train r_theta on D_reward; report accuracy (Eq. 5) on its eval split."""
    started = time.time()
    tokenizer, train, evals, dropped = preference_inputs(cfg, "reward", "reward model base")
    from datasets import Dataset
    from trl import RewardTrainer

    model = load_sequence_classifier(cfg.model_name_or_path, cfg.use_bf16, seed=cfg.seed, tokenizer=tokenizer)
    trainer = RewardTrainer(model=model, args=cfg.trl_args(), train_dataset=Dataset.from_list(train),
                            processing_class=tokenizer, peft_config=cfg.peft_config("SEQ_CLS"))
    group_pairs_by_length(trainer, cfg)
    report_steps(trainer, "reward")
    bs = cfg.per_device_eval_batch_size
    metrics: dict = {"train_samples": len(train), "eval_samples": len(evals),
                     "dropped_long_rows": dropped}
    if trainer.accelerator.num_processes == 1:
        metrics["eval_accuracy_before"] = evaluate_reward_model(trainer.model, tokenizer, evals, bs,
                                                                cfg.max_length)["accuracy"]
    out = train_resumable(trainer, cfg)
    metrics.update(train_loss=float(out.training_loss), train_steps=int(out.global_step))
    metrics.update({f"train_{k}": v for k, v in last_logged(trainer.state.log_history, "accuracy").items()})
    if trainer.accelerator.num_processes == 1:
        ev = evaluate_reward_model(trainer.model, tokenizer, evals, bs, cfg.max_length)
        metrics.update(eval_accuracy=ev["accuracy"], eval_loss=ev["loss"], eval_mean_reward_gap=ev["mean_reward_gap"])
    else:  # sharded: TRL's batch-averaged accuracy
        res = trainer.evaluate(Dataset.from_list(evals))
        metrics.update(eval_accuracy=float(res["eval_accuracy"]), eval_loss=float(res["eval_loss"]))
    return save_stage(cfg, trainer, tokenizer, metrics, started)
