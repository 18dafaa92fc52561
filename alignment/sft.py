"""Stage 1: supervised fine-tuning on the Listing 1 prompts (§V-A, §VII-C1), with TRL's
SFTTrainer (loss on the completion only). Metric: eval perplexity, Eq. 1 (paper: 1.62)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from perfalign.common.equations import perplexity

from .data import load_sft_rows
from .models import PRODUCTION_BASE_MODEL, check_model_reference, load_causal_lm, load_tokenizer
from .prompting import fit_rows
from .stage_config import (
    StageConfig,
    StageResult,
    last_logged,
    prepare_process,
    report_steps,
    save_stage,
    train_resumable,
)


@dataclass
class SFTStageConfig(StageConfig):
    """Paper defaults: 3 epochs, Adam(W) lr 1.41e-5, bf16, global batch 64 = 1 per GPU x 16
    accumulation steps x 4 GPUs (FSDP: launch with alignment/accelerate_fsdp.yaml)."""

    trl_config = "trl:SFTConfig"
    trl_fixed = {"completion_only_loss": True, "packing": False}

    model_name_or_path: str = PRODUCTION_BASE_MODEL  # the base model: a Hub id, a path or a registry name
    output_dir: str = "runs/sft"
    num_train_epochs: float = 3.0
    gradient_accumulation_steps: int = 16
    lr_scheduler_type: str = "linear"
    warmup_steps: float = 0.0                 # int steps, or a ratio in [0, 1)
    eval_before: bool = False                 # also report the perplexity of the base model


def evaluate_perplexity(model, tokenizer, rows: list[dict], batch_size: int = 8, max_length: int | None = None) -> dict:
    """Eq. 1 over every completion token (incl. EOS) of ``rows`` given their prompts."""
    from .scoring import completion_logprobs

    lp = completion_logprobs(model, tokenizer, [r["prompt"] for r in rows], [r["completion"] for r in rows],
                             batch_size=batch_size, max_length=max_length)
    import torch

    return {"perplexity": perplexity(torch.cat(lp.tokens)), "tokens": int(lp.counts.sum())}


def run_sft(cfg: SFTStageConfig) -> StageResult:
    """Fine-tune ``cfg.model_name_or_path`` on the train prompts; report eval perplexity."""
    started = time.time()
    cfg.validate()
    check_model_reference(cfg.model_name_or_path, "SFT base model")
    train_rows = load_sft_rows(cfg.data_path, "train", cfg.max_train_samples)
    eval_rows = load_sft_rows(cfg.data_path, "eval", cfg.max_eval_samples)

    prepare_process(cfg)
    from datasets import Dataset
    from trl import SFTTrainer

    tokenizer = load_tokenizer(cfg.model_name_or_path)
    train_rows, dropped = fit_rows(tokenizer, train_rows, cfg.max_length)  # chat template, statement shortened
    eval_rows, dropped_eval = fit_rows(tokenizer, eval_rows, cfg.max_length)
    if not train_rows or not eval_rows:
        raise ValueError(f"SFT: no train or eval prompt fits max_length={cfg.max_length} with its completion")
    model = load_causal_lm(cfg.model_name_or_path, cfg.use_bf16, tokenizer)
    metrics: dict = {"train_samples": len(train_rows), "eval_samples": len(eval_rows),
                     "dropped_long_rows": dropped + dropped_eval}
    if cfg.eval_before:
        metrics["eval_perplexity_before"] = evaluate_perplexity(model, tokenizer, eval_rows,
                                                                cfg.per_device_eval_batch_size,
                                                                cfg.max_length)["perplexity"]
    train_ds = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in train_rows])
    trainer = SFTTrainer(model=model, args=cfg.trl_args(), train_dataset=train_ds, processing_class=tokenizer,
                         peft_config=cfg.peft_config())
    report_steps(trainer, "sft")
    out = train_resumable(trainer, cfg)
    metrics.update(train_loss=float(out.training_loss), train_steps=int(out.global_step),
                   train_loss_logged=[h["loss"] for h in trainer.state.log_history if "loss" in h])
    metrics.update({f"train_{k}": v for k, v in last_logged(trainer.state.log_history, "mean_token_accuracy").items()})
    if trainer.accelerator.num_processes == 1:
        ev = evaluate_perplexity(trainer.model, tokenizer, eval_rows, cfg.per_device_eval_batch_size, cfg.max_length)
        metrics.update(eval_perplexity=ev["perplexity"], eval_tokens=ev["tokens"])
    else:  # sharded (FSDP) model: the trainer's token-mean eval loss, exp'd
        eval_ds = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in eval_rows])
        loss = trainer.evaluate(eval_ds)["eval_loss"]
        metrics.update(eval_perplexity=math.exp(loss), eval_loss=loss)
    return save_stage(cfg, trainer, tokenizer, metrics, started)
