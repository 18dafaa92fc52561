"""PPO details of RLPF that TRL 1.12's ``trl.experimental.ppo.PPOTrainer`` does not do the paper's
way, added around it without copying its training loop:

* an **adaptive KL controller** (Ziegler et al. 2019, the controller of the TRL versions the paper
  extended): "the KL coefficient is initialized to 0.1" (§VII-C3) implies one; TRL 1.12 reads a
  fixed ``args.kl_coef`` every update, which the controller updates after each logged update;
* **advantages whitened over the whole world batch** (every rank's rollouts), not per rank: with
  the paper's global batch of 4 on 4 GPUs each rank holds one rollout, and per-rank whitening
  normalises one sequence against itself;
* the reward module (``RewardAdapter``, which carries the trained reward model) checked to be on
  the policy's device once the trainer has placed it;
* the **withheld share** of each update's rollouts (common.outcomes: rewards withheld, not
  penalized) logged beside TRL's metrics as ``objective/withheld_share``, over every rank;
* **checkpoints and resume** (TRL's PPO loop saves the policy only and always starts at update
  1): a checkpoint holds the policy and value weights, transformers' optimizer, scheduler, RNG
  and trainer state, and the KL coefficient; ``train(resume_from_checkpoint=...)`` loads them and
  runs the remaining updates, the data loader past the batches already trained on. One process
  only (a sharded policy is not checkpointed).
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)
WEIGHTS_FILE = "policy_and_value.pt"  # a PPO checkpoint's weights (the policy + value wrapper)
KL_FILE = "kl_controller.json"
OPTIMIZER_FILE = "optimizer_and_scheduler.pt"  # TRL's PPO trainer lacks parts of Trainer's own save/load

# Ziegler et al. (2019) / TRL's AdaptiveKLController: target KL (nats per sequence) and horizon
# (episodes over which the coefficient may change by e^{+-0.2}).
DEFAULT_KL_TARGET = 6.0
DEFAULT_KL_HORIZON = 10_000


@dataclass
class AdaptiveKLController:
    """gamma <- gamma * (1 + clip(KL / target - 1, -0.2, 0.2) * n / horizon) after each batch of n episodes."""

    value: float
    target: float = DEFAULT_KL_TARGET
    horizon: int = DEFAULT_KL_HORIZON
    history: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.value < 0 or self.target <= 0 or self.horizon <= 0:
            raise ValueError("AdaptiveKLController: value >= 0, target > 0 and horizon > 0")

    def update(self, current_kl: float, n_steps: int) -> float:
        error = min(max(current_kl / self.target - 1.0, -0.2), 0.2)
        self.value *= 1.0 + error * n_steps / self.horizon
        self.history.append(self.value)
        return self.value


def _all_reduce(t: torch.Tensor) -> torch.Tensor:
    """``t`` summed over every process, in place (unchanged on one process)."""
    import torch

    dist = torch.distributed
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(t)
    return t


class WorldWhiten:
    """Drop-in for TRL's ``masked_whiten`` with mean and (unbiased) variance taken over the masked
    values of every process (all-reduce); identical to TRL's on one process. ``last`` keeps the
    statistics of the latest call (the tests read them)."""

    def __init__(self):
        self.calls = 0
        self.last: dict[str, float] = {}

    def __call__(self, values: torch.Tensor, mask: torch.Tensor, shift_mean: bool = True) -> torch.Tensor:
        import torch

        m = mask.to(torch.float64)
        v = values.to(torch.float64)
        sums = _all_reduce(torch.stack([(v * m).sum(), m.sum()]))
        total, count = sums[0], sums[1]
        if count < 2:
            raise ValueError("whitening needs at least two unmasked values over all processes")
        mean = total / count
        var = _all_reduce((((v - mean) ** 2) * m).sum()) / (count - 1)  # Bessel, as TRL's masked_var
        whitened = (v - mean) * torch.rsqrt(var + 1e-8)
        if not shift_mean:
            whitened += mean
        local = m.sum()
        self.calls += 1
        self.last = {"world_count": float(count), "local_count": float(local),
                     "local_mean": float((whitened * m).sum() / local) if local else 0.0}
        return whitened.to(values.dtype)


def make_rlpf_trainer_class():
    """TRL's PPOTrainer with the controller, world whitening and the device check; built lazily
    so importing this module does not import torch or TRL."""
    import torch
    from transformers import TrainerCallback
    from trl.experimental.ppo import PPOTrainer
    from trl.experimental.ppo import ppo_trainer as trl_ppo

    class KLControllerCallback(TrainerCallback):
        def __init__(self, controller: AdaptiveKLController):
            self.controller = controller

        def on_log(self, args, state, control, logs=None, **kw):
            # objective/kl is gathered over every rank: each rank computes the same coefficient
            if logs and "objective/kl" in logs:
                args.kl_coef = self.controller.update(float(logs["objective/kl"]), args.batch_size)

    class RLPFTrainer(PPOTrainer):
        def __init__(self, *a, kl_controller: AdaptiveKLController | None = None, **kw):
            super().__init__(*a, **kw)
            self.whiten = WorldWhiten()
            self.kl_controller = kl_controller
            if kl_controller is not None:
                self.args.kl_coef = kl_controller.value
                self.add_callback(KLControllerCallback(kl_controller))
            check_on_device(self.reward_model, self.accelerator.device, "RLPF reward model")
            self._rewards_logged = 0

        def log(self, logs, *args, **kw):
            if "objective/scores" in logs:  # one PPO update's metrics: add its withheld share
                logs.update(self._withheld_since_last_log())
            return super().log(logs, *args, **kw)

        def _withheld_since_last_log(self) -> dict:
            history = getattr(self.accelerator.unwrap_model(self.reward_model), "history", None)
            if history is None:
                return {}
            new, self._rewards_logged = history[self._rewards_logged:], len(history)
            return withheld_metrics([bool(getattr(d, "withheld", False)) for d in new], self.accelerator.device)

        def train(self, resume_from_checkpoint: str | None = None):
            saved, trl_ppo.masked_whiten = trl_ppo.masked_whiten, self.whiten
            printed = io.StringIO()  # TRL prints "===training policy===" to stdout: to the log instead
            total, loader = self.args.num_total_batches, self.dataloader
            try:
                if resume_from_checkpoint:
                    self._resume(resume_from_checkpoint)
                with contextlib.redirect_stdout(printed):
                    return super().train()
            finally:
                trl_ppo.masked_whiten = saved
                self.args.num_total_batches, self.dataloader = total, loader
                if printed.getvalue().strip():
                    log.info("PPO: %s", printed.getvalue().strip())

        def _save_checkpoint(self, model, trial):
            from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, rotate_checkpoints

            if self.accelerator.num_processes > 1:
                return  # one process only (module docstring)
            out = Path(self.args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            out.mkdir(parents=True, exist_ok=True)
            torch.save(self.accelerator.unwrap_model(self.model).state_dict(), out / WEIGHTS_FILE)
            controller = self.kl_controller
            (out / KL_FILE).write_text(json.dumps({"kl_coef": self.args.kl_coef,
                                                   "history": controller.history if controller else []}))
            torch.save({"optimizer": self.optimizer.state_dict(), "scheduler": self.lr_scheduler.state_dict()},
                       out / OPTIMIZER_FILE)
            self._save_rng_state(str(out))
            self.state.save_to_json(str(out / "trainer_state.json"))
            rotate_checkpoints(self.args.output_dir, self.args.save_total_limit, use_mtime=True)

        def _resume(self, ckpt: str) -> None:
            from transformers.trainer_callback import TrainerCallback

            self.accelerator.unwrap_model(self.model).load_state_dict(
                torch.load(Path(ckpt) / WEIGHTS_FILE, map_location=self.accelerator.device, weights_only=True))
            opt = torch.load(Path(ckpt) / OPTIMIZER_FILE, map_location=self.accelerator.device, weights_only=True)
            self.optimizer.load_state_dict(opt["optimizer"])
            self.lr_scheduler.load_state_dict(opt["scheduler"])
            self._load_rng_state(ckpt)
            kl = json.loads((Path(ckpt) / KL_FILE).read_text())
            self.args.kl_coef = kl["kl_coef"]
            if self.kl_controller is not None:
                self.kl_controller.value, self.kl_controller.history = kl["kl_coef"], list(kl["history"])
            done = type(self.state).load_from_json(str(Path(ckpt) / "trainer_state.json"))
            total = self.args.num_total_batches
            self.args.num_total_batches = total - done.global_step  # TRL's loop counts from update 1
            self.dataloader = _SkipFirst(self.dataloader, done.global_step)

            class Restore(TrainerCallback):  # TRL's train() zeroes the state before on_train_begin
                def on_train_begin(self, args, state, control, **kwargs):
                    state.global_step, state.episode, state.max_steps = done.global_step, done.episode, total

            self.add_callback(Restore())
            log.info("PPO: resuming from %s (update %d of %d)", ckpt, done.global_step, total)

        def save_model(self, output_dir: str | None = None, _internal_call: bool = False):
            """The policy only. TRL 1.12's PPO save fails once the policy+value wrapper is
            distributed (DDP/FSDP: shared-tensor error on rank 0, a missing Trainer attribute on
            the others): gather the full state dict on every rank, write the policy's part on rank 0."""
            out = output_dir or self.args.output_dir
            state = self.accelerator.get_state_dict(self.model)  # a collective under FSDP
            if self.accelerator.is_main_process:
                policy = self.accelerator.unwrap_model(self.model).policy
                policy.save_pretrained(out, state_dict={k[len("policy."):]: v for k, v in state.items()
                                                        if k.startswith("policy.")})
            self.accelerator.wait_for_everyone()

    return RLPFTrainer


class _SkipFirst:
    """A data loader whose first ``n`` batches (over every pass) are left out: the batches the
    checkpoint's updates trained on."""

    def __init__(self, loader, n: int):
        self.loader, self.n = loader, n

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader:
            if self.n:
                self.n -= 1
                continue
            yield batch


def withheld_metrics(withheld: list[bool], device="cpu") -> dict:
    """``objective/withheld_share`` (and the count) of one update's rewards, summed over every
    rank (each rank's reward adapter sees its own rollouts); a collective when distributed."""
    import torch

    counts = torch.tensor([float(sum(withheld)), float(len(withheld))], device=device)
    n_withheld, total = _all_reduce(counts).tolist()
    return {"objective/withheld_share": n_withheld / total if total else 0.0, "objective/withheld": n_withheld}


def check_on_device(module: torch.nn.Module, device, what: str) -> None:
    """Every parameter of ``module`` on ``device`` (a 6.7B reward model left on the CPU would
    score every rollout there)."""
    import torch

    want = torch.device(device)
    for name, p in module.named_parameters():
        if p.device.type != want.type or (want.index is not None and p.device.index != want.index):
            raise RuntimeError(f"{what}: parameter {name} is on {p.device}, the policy on {want}")
