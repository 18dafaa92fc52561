"""Stage 4: Direct Performance Alignment (§V-C, §VII-C4): DPO with the adaptive margin, Eq. 7,
from the SFT model (which is also the frozen reference pi_SFT). Metric: Eq. 8 (paper: 87 %).

TRL's DPOTrainer has no per-example margin. ``DPATrainer`` keeps a ``margin`` column and, with
the reference log-probs precomputed, shifts the reference log-prob of the fast completion by
mu / beta before TRL's sigmoid loss: -log sigma(beta * ((pi_f - (ref_f + mu/beta)) - (pi_s - ref_s)))
= -log sigma(beta * Delta - mu), which is Eq. 7. The test suite checks the trainer's loss
against ``equations.dpa_loss`` computed independently. (TRL's logged ``rewards/*`` are shifted
by the same amount; we report Eq. 8 from our own forward passes.)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from .common import StageConfig, StageResult, drop_printer, last_logged, prepare_process, save_stage
from .data import preference_splits
from .equations import DEFAULT_MAX_MARGIN, dpa_accuracy, dpa_loss
from .models import check_model_reference, load_causal_lm, load_tokenizer
from .scoring import completion_logprobs

TRAIN_SPLITS = ("reward_train", "rl_train")  # D_align (RLPF and DPA share it)
EVAL_SPLITS = ("reward_eval", "rl_eval")     # 5 % of D_align
PINNED_TRL = "1.12"  # DPATrainer relies on DPOTrainer internals (_compute_loss, compute_ref_log_probs)


@dataclass
class DPAStageConfig(StageConfig):
    """Paper defaults: 1 epoch, global batch 4 (1 per GPU x 4 GPUs), AdamW lr 1e-7, beta 0.6."""

    model_name_or_path: str = "runs/sft"       # the SFT run: policy init and reference
    data_path: str = "runs/triplets"
    output_dir: str = "runs/dpa"
    num_train_epochs: float = 1.0
    learning_rate: float = 1e-7
    optim: str = "adamw_torch"
    beta: float = 0.6
    max_margin: float = DEFAULT_MAX_MARGIN      # lambda of Eq. 3 (mu is recomputed from the runtimes)
    use_margin: bool = True                     # False: plain DPO (ablation)
    train_splits: tuple[str, ...] = TRAIN_SPLITS
    eval_splits: tuple[str, ...] = EVAL_SPLITS

    @classmethod
    def embedded(cls, **overrides) -> "DPAStageConfig":
        base = dict(bf16=False, use_cpu=True, activation_checkpointing=False, per_device_train_batch_size=4,
                    gradient_accumulation_steps=1, learning_rate=1e-4, num_train_epochs=1.0, max_length=512,
                    logging_steps=5, torch_threads=1)
        return cls(**{**base, **overrides})

    def validate(self) -> None:
        super().validate()
        if not self.beta > 0:
            raise ValueError("DPAStageConfig.beta must be > 0")

    def trl_args(self):
        from trl import DPOConfig

        return self.build_trl_config(DPOConfig, beta=self.beta, loss_type=["sigmoid"], max_length=self.max_length,
                                     precompute_ref_log_probs=True, optim=self.optim)


def _check_trl() -> None:
    import trl

    if not trl.__version__.startswith(PINNED_TRL):
        raise RuntimeError(f"DPATrainer is written against trl {PINNED_TRL}.x internals; found trl {trl.__version__}")


def make_dpa_trainer_class():
    """Built lazily so importing this module does not import TRL."""
    from trl import DPOTrainer
    from trl.trainer.dpo_trainer import DataCollatorForPreference

    class MarginCollator(DataCollatorForPreference):
        def torch_call(self, examples):
            out = super().torch_call(examples)
            out["margin"] = torch.tensor([float(e["margin"]) for e in examples], dtype=torch.float32)
            return out

    class DPATrainer(DPOTrainer):
        """DPOTrainer with Eq. 7's per-example margin mu (dataset column ``margin``)."""

        def __init__(self, *a, args=None, processing_class=None, **kw):
            _check_trl()
            if not args.precompute_ref_log_probs or list(args.loss_type) != ["sigmoid"]:
                raise ValueError("DPATrainer needs precompute_ref_log_probs=True and loss_type=['sigmoid']")
            if args.ld_alpha is not None or args.use_weighting or args.f_divergence_type != "reverse_kl" \
                    or args.use_liger_kernel:
                raise ValueError("DPATrainer supports the plain sigmoid DPO loss only (Eq. 7)")
            pad = processing_class.pad_token_id
            kw.setdefault("data_collator", MarginCollator(pad_token_id=pad, max_length=args.max_length,
                                                          truncation_mode=args.truncation_mode,
                                                          pad_to_multiple_of=args.pad_to_multiple_of))
            super().__init__(*a, args=args, processing_class=processing_class, **kw)

        def _set_signature_columns_if_needed(self):
            super()._set_signature_columns_if_needed()
            if "margin" not in self._signature_columns:
                self._signature_columns = [*self._signature_columns, "margin"]

        def compute_ref_log_probs(self, model, inputs):
            return super().compute_ref_log_probs(model, {k: v for k, v in inputs.items() if k != "margin"})

        def _compute_loss(self, model, inputs, return_outputs):
            inputs = dict(inputs)
            margin = inputs.pop("margin")
            ref_chosen = inputs["ref_chosen_logps"]
            inputs["ref_chosen_logps"] = ref_chosen + margin.to(ref_chosen) / self.beta
            return super()._compute_loss(model, inputs, return_outputs)

    return DPATrainer


def pair_logprobs(model, tokenizer, pairs: list[dict], batch_size: int, max_length: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    prompts = [p["prompt"] for p in pairs]
    fast = completion_logprobs(model, tokenizer, prompts, [p["chosen"] for p in pairs], batch_size, max_length).sums
    slow = completion_logprobs(model, tokenizer, prompts, [p["rejected"] for p in pairs], batch_size, max_length).sums
    return fast, slow


def run_dpa(cfg: DPAStageConfig) -> StageResult:
    """DPA from the SFT model on D_align; report Eq. 8 (and Eq. 7) on D_align's eval split."""
    started = time.time()
    cfg.validate()
    check_model_reference(cfg.model_name_or_path, "DPA policy / reference (SFT model)")
    train, evals = preference_splits(cfg, "DPA")
    _check_trl()

    prepare_process(cfg)
    from datasets import Dataset

    tokenizer = load_tokenizer(cfg.model_name_or_path)
    model = load_causal_lm(cfg.model_name_or_path, cfg.bf16)
    # The eval set goes to TRL with mu = 0, so its eval "rewards/accuracies" is Eq. 8 (batch-averaged):
    # the metric under FSDP, and a cross-check of our exact computation otherwise.
    zero_margin = Dataset.from_list([{**e, "margin": 0.0} for e in evals])
    trainer = make_dpa_trainer_class()(model=model, args=cfg.trl_args(), train_dataset=Dataset.from_list(train),
                                       eval_dataset=zero_margin, processing_class=tokenizer)
    drop_printer(trainer)
    single = trainer.accelerator.num_processes == 1
    bs = cfg.per_device_eval_batch_size
    if single:  # pi_SFT log-probs, before training, on the trainer's device
        ref_fast, ref_slow = pair_logprobs(trainer.model, tokenizer, evals, bs, cfg.max_length)
    out = trainer.train()
    trl_eval = trainer.evaluate()
    metrics = {
        "train_samples": len(train), "eval_samples": len(evals), "train_loss": float(out.training_loss),
        "train_steps": int(out.global_step), "beta": cfg.beta,
        "eval_accuracy_trl": float(trl_eval["eval_rewards/accuracies"]),
        **{f"train_{k}": v for k, v in last_logged(trainer.state.log_history, "rewards/").items()
           if not k.startswith("eval")},
    }
    if single:
        pol_fast, pol_slow = pair_logprobs(trainer.model, tokenizer, evals, bs, cfg.max_length)
        margins = torch.tensor([e["margin"] for e in evals])
        metrics.update({
            "eval_accuracy": dpa_accuracy(pol_fast, pol_slow, ref_fast, ref_slow),                # Eq. 8
            "eval_loss": float(dpa_loss(pol_fast, pol_slow, ref_fast, ref_slow, margins, cfg.beta)),  # Eq. 7
            "eval_fast_logratio": float((pol_fast - ref_fast).mean()),
            "eval_slow_logratio": float((pol_slow - ref_slow).mean()),
        })
    else:
        metrics["eval_accuracy"] = metrics["eval_accuracy_trl"]
    return save_stage(cfg, trainer, tokenizer, metrics, started)
