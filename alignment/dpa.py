"""Stage 4: Direct Performance Alignment (§V-C, §VII-C4): DPO with the adaptive margin, Eq. 7,
from the SFT model (which is also the frozen reference pi_SFT). Metric: Eq. 8 (paper: 87 %).
With ``nll_weight`` > 0 RPO's NLL term on the fast program is added (``equations.dpa_nll_loss``).

TRL's DPOTrainer has no per-example margin. ``DPATrainer`` keeps a ``margin`` column and, with
the reference log-probs precomputed, shifts the reference log-prob of the fast completion by
mu / beta before TRL's sigmoid loss: -log sigma(beta * ((pi_f - (ref_f + mu/beta)) - (pi_s - ref_s)))
= -log sigma(beta * Delta - mu), which is Eq. 7. The test suite checks the trainer's loss
against ``equations.dpa_loss`` computed independently. TRL's logged ``rewards/*`` are shifted
by the same amount (its ``rewards/accuracies`` is the share of pairs with beta * Delta > mu):
metrics.json reports them as ``trl_*`` beside Eq. 8, which the trainer counts per pair from the
same forward passes (``train_accuracy``, ``eval_accuracy``) and the margin-aware share
(``*_margin_accuracy``).
"""
from __future__ import annotations

import copy
import gc
import random
import statistics
import time
from dataclasses import dataclass

from perfalign.common.equations import dpa_accuracy

from .models import load_causal_lm
from .reward_model import PreferenceStageConfig, preference_inputs
from .stage_config import StageResult, group_pairs_by_length, last_logged, report_steps, save_stage, train_resumable

TRAIN_SPLITS = ("reward_train", "rl_train")  # D_align (RLPF and DPA share it)
EVAL_SPLITS = ("reward_eval", "rl_eval")     # 5 % of D_align
LOSS_WITH_NLL = ("sigmoid", "sft")  # Eq. 7 + RPO's NLL term (DPAStageConfig.nll_weight)
PINNED_TRL = "1.12"  # DPATrainer relies on DPOTrainer internals (_compute_loss, compute_ref_log_probs)


@dataclass
class DPAStageConfig(PreferenceStageConfig):
    """Paper defaults: 1 epoch, global batch 4 (1 per GPU x 4 GPUs), AdamW lr 1e-7, beta 0.6."""

    trl_config = "trl:DPOConfig"
    trl_fixed = {"loss_type": ["sigmoid"], "precompute_ref_log_probs": True}  # what DPATrainer builds on

    model_name_or_path: str = "runs/sft"       # the SFT run: policy init and reference
    output_dir: str = "runs/dpa"
    learning_rate: float = 1e-7
    beta: float = 0.6                           # beta of Eq. 7 (TRL's DPO beta)
    nll_weight: float = 0.0                     # weight of RPO's NLL term on the fast program (0: Eq. 7 alone)
    train_splits: tuple[str, ...] = TRAIN_SPLITS  # D_align's training splits of the triplets
    eval_splits: tuple[str, ...] = EVAL_SPLITS    # ... and its evaluation splits

    def check_values(self) -> None:
        super().check_values()
        if not self.beta > 0:
            raise ValueError("DPAStageConfig.beta must be > 0")
        if not self.nll_weight >= 0:
            raise ValueError("DPAStageConfig.nll_weight must be >= 0")

    def trl_args(self, **computed):
        """TRL's DPOConfig; with ``nll_weight`` > 0 its sigmoid loss (Eq. 7 through the shifted
        reference) plus its "sft" loss (the fast program's token-mean NLL) weighted by it."""
        if self.nll_weight > 0:
            computed = {"loss_type": list(LOSS_WITH_NLL), "loss_weights": [1.0, self.nll_weight], **computed}
        return super().trl_args(**computed)


def _check_trl() -> None:
    import trl

    if not trl.__version__.startswith(PINNED_TRL):
        raise RuntimeError(f"DPATrainer is written against trl {PINNED_TRL}.x internals; found trl {trl.__version__}")


def make_dpa_trainer_class():
    """Built lazily so importing this module does not import torch or TRL."""
    import torch
    from torch.utils.data import DataLoader
    from trl import DPOTrainer
    from trl.trainer.dpo_trainer import DataCollatorForPreference
    from trl.trainer.utils import selective_log_softmax

    class MarginCollator(DataCollatorForPreference):
        def torch_call(self, examples):
            out = super().torch_call(examples)
            out["margin"] = torch.tensor([float(e["margin"]) for e in examples], dtype=torch.float32)
            return out

    class DPATrainer(DPOTrainer):
        """DPOTrainer with Eq. 7's per-example margin mu (dataset column ``margin``), reference
        log-probs computed on a reference model prepared for the launch mode, and Eq. 8 counted
        per pair (``pair_metrics``)."""

        def __init__(self, model, ref_model=None, *a, args=None, processing_class=None, **kw):
            _check_trl()
            if not args.precompute_ref_log_probs or tuple(args.loss_type) not in (("sigmoid",), LOSS_WITH_NLL):
                raise ValueError("DPATrainer needs precompute_ref_log_probs=True and loss_type=['sigmoid'] "
                                 "(or ['sigmoid', 'sft']: Eq. 7 + the NLL term)")
            if args.ld_alpha is not None or args.use_weighting or args.f_divergence_type != "reverse_kl" \
                    or args.use_liger_kernel:
                raise ValueError("DPATrainer supports the plain sigmoid DPO loss only (Eq. 7)")
            pad = processing_class.pad_token_id
            kw.setdefault("data_collator", MarginCollator(pad_token_id=pad, max_length=args.max_length,
                                                          truncation_mode=args.truncation_mode,
                                                          pad_to_multiple_of=args.pad_to_multiple_of))
            # TRL 1.12 precomputes with the *unprepared* policy unless DeepSpeed is on (under FSDP a
            # device mismatch, TRL #6470) and shares the result through a cache file only rank 0
            # can see. A copy of pi_SFT taken before any wrapping is prepared by TRL for the launch
            # mode (DeepSpeed / FSDP / DDP / one device); _precompute_ref_logps below uses it.
            if ref_model is None:
                ref_model = copy.deepcopy(model)
            self._pairs = {"train": _PairCounts(), "eval": _PairCounts()}
            super().__init__(model, ref_model, *a, args=args, processing_class=processing_class, **kw)
            self._release_reference()

        def _release_reference(self):
            """pi_SFT's log-probs are in the datasets now; the copy is not needed for training."""
            ref, self.ref_model = self.ref_model, None
            self.accelerator._models = [m for m in self.accelerator._models if m is not ref]
            del ref
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()

        def _precompute_ref_logps(self, dataset, name, batch_size):
            if self.ref_model is None:
                raise ValueError(f"DPA: reference log-probs for {name!r} must be computed before training "
                                 "(pass the dataset as eval_dataset when building the trainer)")
            loader = self.accelerator.prepare(DataLoader(dataset, batch_size=batch_size, collate_fn=self.data_collator,
                                                         shuffle=False, num_workers=0))
            chosen, rejected = [], []
            for batch in loader:  # every rank runs every step: FSDP's collectives stay in lockstep
                c, r = self.compute_ref_log_probs(self.ref_model, batch)
                c, r = self.accelerator.gather_for_metrics((c, r))
                chosen.append(c.float().cpu())
                rejected.append(r.float().cpu())
            self.accelerator._dataloaders.remove(loader)
            # every rank holds the gathered values: no file to share between ranks
            return (dataset.add_column("ref_chosen_logps", torch.cat(chosen).tolist())
                    .add_column("ref_rejected_logps", torch.cat(rejected).tolist()))

        def _set_signature_columns_if_needed(self):
            super()._set_signature_columns_if_needed()
            if "margin" not in self._signature_columns:
                self._signature_columns = [*self._signature_columns, "margin"]

        def compute_ref_log_probs(self, model, inputs):
            return super().compute_ref_log_probs(model, {k: v for k, v in inputs.items() if k != "margin"})

        def _compute_loss(self, model, inputs, return_outputs):
            mode = "train" if self.model.training else "eval"
            inputs = dict(inputs)
            margin = inputs.pop("margin")
            ref_chosen, ref_rejected = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
            margin = margin.to(ref_chosen)
            inputs["ref_chosen_logps"] = ref_chosen + margin / self.beta  # Eq. 7 (module docstring)
            loss, outputs = super()._compute_loss(model, inputs, True)
            with torch.no_grad():  # the same forward, unshifted: Eq. 8 per pair
                mask = inputs["completion_mask"][..., 1:]
                lp = selective_log_softmax(outputs.logits[..., :-1, :], inputs["input_ids"][..., 1:])
                chosen, rejected = (lp * mask).sum(1).chunk(2, dim=0)
                gathered = self.accelerator.gather_for_metrics((chosen, rejected, ref_chosen, ref_rejected, margin))
                acc, margin_acc = self._pairs[mode].add(*(t.float().cpu() for t in gathered), beta=self.beta)
                self._metrics[mode]["eq8/accuracy"].append(acc)
                self._metrics[mode]["eq8/margin_accuracy"].append(margin_acc)
            return (loss, outputs) if return_outputs else loss

        def pair_metrics(self, mode: str) -> dict:
            return self._pairs[mode].metrics()

        def reset_pair_metrics(self, mode: str) -> None:
            self._pairs[mode] = _PairCounts()

    return DPATrainer


class _PairCounts:
    """Per-pair counts over a pass: Eq. 8 (log-ratio of d_f above d_s's) and the margin-aware
    version (beta * Delta > mu, what TRL's shifted ``rewards/accuracies`` measures)."""

    def __init__(self):
        self.n, self.eq8, self.margin = 0, 0.0, 0.0
        self.chosen_sum = self.rejected_sum = 0.0

    def add(self, fast, slow, ref_fast, ref_slow, margin, beta: float) -> tuple[float, float]:
        n = int(fast.numel())
        if not n:
            return 0.0, 0.0
        eq8 = dpa_accuracy(fast, slow, ref_fast, ref_slow)
        delta = (fast - ref_fast) - (slow - ref_slow)
        ok = float((beta * delta.float() > margin.float()).float().mean())
        self.n, self.eq8, self.margin = self.n + n, self.eq8 + eq8 * n, self.margin + ok * n
        self.chosen_sum += float((fast - ref_fast).float().sum())
        self.rejected_sum += float((slow - ref_slow).float().sum())
        return eq8, ok

    def metrics(self) -> dict:
        if not self.n:
            return {}
        return {"accuracy": self.eq8 / self.n, "margin_accuracy": self.margin / self.n, "pairs": self.n,
                "fast_logratio": self.chosen_sum / self.n, "slow_logratio": self.rejected_sum / self.n}


def run_dpa(cfg: DPAStageConfig) -> StageResult:
    """DPA from the SFT model on D_align; report Eq. 8 (and Eq. 7) on D_align's eval split."""
    started = time.time()
    tokenizer, train, evals, dropped = preference_inputs(cfg, "DPA", "DPA policy / reference (SFT model)")
    _check_trl()
    from datasets import Dataset

    available, reads = len(train), cfg.rows_read()
    if reads and available > reads:
        # a max_steps run reads `reads` rows: draw them now (seeded, as the sampler would), so the
        # reference log-probs are computed for those alone (the small profile: 40 of ~340 pairs)
        train = random.Random(cfg.seed).sample(train, reads)
    model = load_causal_lm(cfg.model_name_or_path, cfg.use_bf16, tokenizer)
    # pi_SFT, copied before the trainer starts the distributed state: every rank holds the same
    # full weights when TRL shards it (a second from_pretrained under FSDP's RAM-efficient
    # loading would leave ranks > 0 empty).
    ref = copy.deepcopy(model)
    trainer = make_dpa_trainer_class()(model=model, ref_model=ref, args=cfg.trl_args(),
                                       train_dataset=Dataset.from_list(train), eval_dataset=Dataset.from_list(evals),
                                       processing_class=tokenizer, peft_config=cfg.peft_config())
    del ref
    group_pairs_by_length(trainer, cfg)
    report_steps(trainer, "dpa")
    ref_cols = {f"eval_ref_{k}_logps_mean": statistics.fmean(trainer.eval_dataset[c])
                for k, c in (("fast", "ref_chosen_logps"), ("slow", "ref_rejected_logps"))}
    out = train_resumable(trainer, cfg)
    seen = trainer.pair_metrics("train")
    trainer.reset_pair_metrics("eval")
    trl_eval = trainer.evaluate()
    ev = trainer.pair_metrics("eval")
    logged = last_logged(trainer.state.log_history, "rewards/")
    metrics = {
        "train_samples": len(train), "train_rows_available": available, "eval_samples": len(evals),
        "dropped_long_rows": dropped,
        "train_loss": float(out.training_loss),
        "train_steps": int(out.global_step), "beta": cfg.beta, "use_margin": cfg.use_margin,
        "nll_weight": cfg.nll_weight,
        # Eq. 8 per pair (the policy as it trained on each pair), and beta * Delta > mu
        "train_accuracy": seen.get("accuracy"), "train_margin_accuracy": seen.get("margin_accuracy"),
        "eval_accuracy": ev["accuracy"], "eval_margin_accuracy": ev["margin_accuracy"],
        "eval_loss": float(trl_eval["eval_loss"]),  # Eq. 7 with the eval pairs' margins
        "eval_fast_logratio": ev["fast_logratio"], "eval_slow_logratio": ev["slow_logratio"], **ref_cols,
        # TRL's own numbers, shifted by the margin (rewards/chosen = beta * logratio(d_f) - mu):
        **{f"trl_train_{k}": v for k, v in logged.items() if not k.startswith("eval")},
        **{f"trl_{k}": float(v) for k, v in trl_eval.items() if "rewards/" in k},
    }
    return save_stage(cfg, trainer, tokenizer, metrics, started)
