"""Stage 3: Reinforcement Learning with Performance Feedback (§V-B, §VII-C3): PPO from the SFT
model with the reward of Eq. 4 and a KL penalty (gamma = 0.1) against the SFT model (Eq. 6).
Metrics on D_RL's eval prompts: mean reward and KL (paper: 1.8 and 0.29). The KL coefficient
starts at 0.1 and adapts (alignment.rlpf_trainer); advantages are whitened over all ranks' rollouts.

Choice: TRL 1.12's own ``trl.experimental.ppo.PPOTrainer``, fed a ``RewardAdapter`` module in
place of the reward model (it decodes each sequence, executes the code in the sandbox in one
batched ``run_many`` per rollout, and falls back to the trained reward model for synthetic
problems). That keeps TRL's PPO (GAE, clipping, value head, KL-in-reward) unmodified; the
adapter is tested against a hand computation of Eq. 4. "Four PPO epochs" is TRL's
``num_ppo_epochs=4`` (optimisation epochs per rollout batch), the reading that matches TRL's
PPO the paper extended; generation uses top-k 0 / top-p 1.0 (TRL's PPO hard-codes both).
"""
from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perfalign.common.equations import kl_penalized_objective
from perfalign.common.outcomes import withheld_share
from perfalign.common.plausibility import DEFAULT_CAP, DEFAULT_REMEASURE_ABOVE, SpeedupPolicy
from perfalign.sandbox.clock import DEFAULT_CLOCK, check_clock
from perfalign.sandbox.settings import SandboxSettings

from .data import load_contest_problems, load_triplet_rows
from .models import check_model_reference, load_causal_lm, load_sequence_classifier, load_tokenizer
from .prompting import PromptTooLong, model_prompt
from .rlpf_trainer import DEFAULT_KL_HORIZON, DEFAULT_KL_TARGET, AdaptiveKLController, make_rlpf_trainer_class
from .stage_config import (
    StageConfig,
    StageResult,
    last_logged,
    no_grad,
    prepare_process,
    report_steps,
    save_stage,
    train_resumable,
)

if TYPE_CHECKING:  # the reward module imports torch: loaded where the work happens
    from .performance_reward import PerformanceReward, PromptInfo

PINNED_TRL = "1.12"  # PPOTrainer left TRL in 1.13


@dataclass
class RLPFStageConfig(StageConfig):
    """Paper defaults: PPO epochs 4, global batch 4 (1 per GPU x 4 GPUs), lr 1.41e-5, KL 0.1,
    top-k 0, top-p 1.0, from the SFT model; r_theta for prompts without tests."""

    trl_config = "trl.experimental.ppo:PPOConfig"
    trl_fixed = {"max_steps": -1, "stop_token": "eos", "num_sample_generations": 0}  # PPO counts total_episodes

    model_name_or_path: str = "runs/sft"              # policy init and the KL reference
    reward_model_path: str | None = "runs/reward_model"
    value_model_path: str | None = None               # None: the reward model, else the SFT model (new head)
    codecontests_dir: str | list[str] | None = None   # tests + submission runtimes of the contest problems
    output_dir: str = "runs/rlpf"
    optim: str = "adamw_torch_fused"                  # TRL's PPO default (the same AdamW, fused kernel)
    num_ppo_epochs: int = 4
    num_mini_batches: int = 1
    kl_coef: float = 0.1                              # gamma's initial value (§VII-C3)
    kl_controller: str = "adaptive"                   # "adaptive" (Ziegler et al.) or "fixed"
    kl_target: float = DEFAULT_KL_TARGET              # the adaptive controller's target KL (nats per sequence)
    kl_horizon: int = DEFAULT_KL_HORIZON              # ... and its horizon (episodes)
    kl_estimator: str = "k1"
    temperature: float = 1.0
    response_length: int = 1024
    total_episodes: int | None = None                 # None: num_train_epochs x |D_RL train prompts|
    missing_eos_penalty: float | None = None
    eval_samples_per_prompt: int = 1                  # answers sampled per evaluation prompt
    eval_before: bool = False                         # also measure the SFT model (KL 0 by definition)
    speedup_cap: float = DEFAULT_CAP                  # common.plausibility: Eq. 4's speedup capped here
    remeasure_above: float = DEFAULT_REMEASURE_ABOVE  # ... and re-measured once above this
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # the run's [sandbox], for Eq. 4's runs
    test_repeats: int | None = None                   # None: as the dataset measured its labels
    clock: str = DEFAULT_CLOCK                        # Eq. 4's clock (sandbox.clock): the dataset's labels' own
    train_splits: tuple[str, ...] = ("rl_train",)     # D_RL's training splits of the triplets
    eval_splits: tuple[str, ...] = ("rl_eval",)       # ... and its evaluation splits

    @property
    def batch_size(self) -> int:
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    def check_values(self) -> None:
        super().check_values()
        if self.batch_size % self.num_mini_batches:
            raise ValueError("RLPF: per_device_train_batch_size * gradient_accumulation_steps must be a multiple "
                             "of num_mini_batches")
        if self.kl_coef < 0 or self.num_ppo_epochs < 1 or self.response_length < 1 or self.temperature <= 0:
            raise ValueError("RLPF: kl_coef >= 0, num_ppo_epochs >= 1, response_length >= 1, temperature > 0")
        if self.kl_estimator not in ("k1", "k3"):
            raise ValueError("RLPF: kl_estimator is 'k1' or 'k3'")
        if self.kl_controller not in ("adaptive", "fixed"):
            raise ValueError("RLPF: kl_controller is 'adaptive' or 'fixed'")
        self.speedup_policy()  # cap / remeasure_above checked by the policy itself
        if self.test_repeats is not None and self.test_repeats < 1:
            raise ValueError("RLPF: test_repeats must be >= 1 (or None: as the dataset)")
        check_clock(self.clock)

    def speedup_policy(self) -> SpeedupPolicy:
        return SpeedupPolicy(cap=self.speedup_cap, remeasure_above=self.remeasure_above)

    def make_kl_controller(self) -> AdaptiveKLController | None:
        if self.kl_controller == "fixed":
            return None
        return AdaptiveKLController(self.kl_coef, self.kl_target, self.kl_horizon)

    def trl_args(self, n_train: int):
        episodes = self.max_steps * self.batch_size if self.max_steps > 0 else self.total_episodes
        return super().trl_args(total_episodes=episodes or int(self.num_train_epochs * n_train),
                                local_rollout_forward_batch_size=self.batch_size,
                                sft_model_path=self.model_name_or_path, reward_model_path=self.reward_model_path or "")


def rl_prompts(rows: list[dict]) -> list[PromptInfo]:
    """One prompt per (problem, language) of the triplets, in table order."""
    from .performance_reward import PromptInfo

    out: dict[tuple[str, str, str], PromptInfo] = {}
    for r in rows:
        out.setdefault((r["problem_id"], r["language"], r["prompt"]),
                       PromptInfo(r["prompt"], r["problem_id"], r["language"], r["source"]))
    return list(out.values())


@no_grad
def evaluate_policy(policy, ref_policy, tokenizer, infos: list[PromptInfo], reward: PerformanceReward, *,
                    response_length: int, temperature: float = 1.0, samples_per_prompt: int = 1,
                    kl_coef: float = 0.1, batch_size: int = 16, seed: int = 0) -> dict:
    """Sample the policy as PPO does (top-k 0, top-p 1), then mean reward (Eq. 4), KL to the
    reference (sum over response tokens of log pi - log pi_ref, TRL's ``objective/kl``) and Eq. 6."""
    import torch

    torch.manual_seed(seed)
    policy.eval()
    ref_policy.eval()
    device = next(policy.parameters()).device
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    flat = [i for i in infos for _ in range(samples_per_prompt)]
    kls, details = [], []
    try:
        for b in range(0, len(flat), batch_size):
            chunk = flat[b:b + batch_size]
            enc = tokenizer([i.prompt for i in chunk], return_tensors="pt", padding=True).to(device)
            gen = policy.generate(**enc, do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
                                  max_new_tokens=response_length, pad_token_id=tokenizer.pad_token_id,
                                  eos_token_id=tokenizer.eos_token_id)
            ctx = enc["input_ids"].shape[1]
            resp = gen[:, ctx:]
            # response tokens up to and including the first EOS
            is_eos = resp == tokenizer.eos_token_id
            after = (is_eos.cumsum(1) - is_eos.long()) > 0
            mask = ~after & (resp != tokenizer.pad_token_id) | is_eos & ~after
            attn = torch.cat([enc["attention_mask"], mask.long()], 1)
            pos = (attn.cumsum(1) - 1).clamp(min=0)
            logps = []
            for model in (policy, ref_policy):
                logits = model(input_ids=gen, attention_mask=attn, position_ids=pos).logits[:, ctx - 1:-1].float()
                logps.append(torch.log_softmax(logits / temperature, -1).gather(-1, resp[..., None]).squeeze(-1))
            kls += ((logps[0] - logps[1]) * mask).sum(1).tolist()
            texts = [tokenizer.decode(r[m], skip_special_tokens=True) for r, m in zip(resp, mask)]
            details += reward(chunk, texts)
    finally:
        tokenizer.padding_side = side
    n = len(details)
    # withheld rewards (common.outcomes) are no reward: the means are over the others
    given = [(d.reward, k) for d, k in zip(details, kls) if not d.withheld]
    rewards = [r for r, _ in given]
    executed = [d for d in details if d.kind != "reward_model" and not d.withheld]
    return {"mean_reward": sum(rewards) / len(rewards) if rewards else None, "kl": sum(kls) / n,
            "objective": kl_penalized_objective(rewards, [k for _, k in given], kl_coef) if given else None,  # Eq. 6
            "correct_share": sum(d.verdict == "OK" for d in executed) / len(executed) if executed else None,
            "withheld_share": withheld_share(n - len(given), n), "samples": n}


def fit_prompts(tokenizer, infos: list[PromptInfo], budget: int) -> list[PromptInfo]:
    """The prompts as the policy sees them (alignment.prompting), statements shortened to
    ``budget`` tokens; a prompt whose request alone is longer is left out (counted by the caller)."""
    out = []
    for info in infos:
        try:
            out.append(dataclasses.replace(info, prompt=model_prompt(tokenizer, info.prompt, budget)))
        except PromptTooLong:
            continue
    return out


def run_rlpf(cfg: RLPFStageConfig) -> StageResult:
    """PPO from the SFT model on D_RL's prompts with Eq. 4; report eval mean reward and KL."""
    started = time.time()
    cfg.validate()
    check_model_reference(cfg.model_name_or_path, "RLPF policy (SFT model)")
    train = rl_prompts(load_triplet_rows(cfg.data_path, cfg.train_splits, None, "RLPF train"))[:cfg.max_train_samples]
    evals = rl_prompts(load_triplet_rows(cfg.data_path, cfg.eval_splits, None, "RLPF eval"))[:cfg.max_eval_samples]
    if len(train) < cfg.batch_size:
        raise ValueError(f"RLPF: {len(train)} train prompts, but one PPO batch takes {cfg.batch_size} "
                         "(per_device_train_batch_size * gradient_accumulation_steps)")
    contest_ids = {i.problem_id for i in train + evals if i.source == "contest"}
    problems = {}
    if contest_ids:
        if not cfg.codecontests_dir:
            raise ValueError("RLPF: the RL data has contest prompts; set codecontests_dir (their tests and runtimes)")
        problems = load_contest_problems(cfg.codecontests_dir, contest_ids)
        missing = sorted(contest_ids - set(problems))
        if missing:
            raise ValueError(f"RLPF: {len(missing)} contest problems are not in {cfg.codecontests_dir}: {missing[:5]}")
    needs_rm = any(i.source != "contest" or not problems[i.problem_id].inputs for i in train + evals)
    if needs_rm:
        check_model_reference(cfg.reward_model_path, "RLPF reward model (needed for prompts without tests)")
    value_path = cfg.value_model_path or (cfg.reward_model_path if needs_rm else None) or cfg.model_name_or_path
    check_model_reference(value_path, "RLPF value model")
    import trl

    if not trl.__version__.startswith(PINNED_TRL):
        raise RuntimeError(f"RLPF uses trl.experimental.ppo from trl {PINNED_TRL}.x; found trl {trl.__version__}")
    from perfalign.sandbox import Sandbox

    from .performance_reward import PerformanceReward, RewardAdapter

    sandbox = Sandbox.from_settings(cfg.sandbox)  # fails early if unavailable

    prepare_process(cfg)
    from datasets import Dataset

    tokenizer = load_tokenizer(cfg.model_name_or_path, padding_side="left")
    budget = (cfg.max_length or 10**9) - cfg.response_length
    n_train = len(train)
    train, evals = fit_prompts(tokenizer, train, budget), fit_prompts(tokenizer, evals, budget)
    policy = load_causal_lm(cfg.model_name_or_path, cfg.use_bf16, tokenizer)
    ref = load_causal_lm(cfg.model_name_or_path, cfg.use_bf16, tokenizer)
    rm = (load_sequence_classifier(cfg.reward_model_path, cfg.use_bf16, seed=cfg.seed, tokenizer=tokenizer)
          if needs_rm else None)
    value = load_sequence_classifier(value_path, cfg.use_bf16, seed=cfg.seed, tokenizer=tokenizer)
    reward = PerformanceReward(problems, rm, tokenizer, sandbox, workers=sandbox.workers, repeats=cfg.test_repeats,
                               policy=cfg.speedup_policy(), max_length=cfg.max_length, clock=cfg.clock)
    index: dict[tuple[int, ...], PromptInfo] = {}
    for info in train + evals:
        ids = tokenizer(info.prompt)["input_ids"]
        if len(ids) <= budget:
            index[tuple(ids)] = info
    kept = [i for i in train if tuple(tokenizer(i.prompt)["input_ids"]) in index]
    if len(kept) < cfg.batch_size:
        raise ValueError(f"RLPF: only {len(kept)} train prompts fit max_length - response_length = {budget} tokens")
    adapter = RewardAdapter(reward, tokenizer, index)

    def to_ds(infos: list[PromptInfo]):  # PPOTrainer takes pre-tokenized prompts only
        wanted = set(infos)
        return Dataset.from_dict({"input_ids": [list(k) for k, v in index.items() if v in wanted]})

    metrics: dict = {"train_prompts": len(kept), "eval_prompts": len(evals), "kl_coef_init": cfg.kl_coef,
                     "kl_controller": cfg.kl_controller, "dropped_long_prompts": n_train - len(kept)}
    eval_kw = dict(response_length=cfg.response_length, temperature=cfg.temperature,
                   samples_per_prompt=cfg.eval_samples_per_prompt, kl_coef=cfg.kl_coef,
                   batch_size=cfg.per_device_eval_batch_size, seed=cfg.seed)
    if cfg.eval_before:
        before = evaluate_policy(policy, ref, tokenizer, evals, reward, **eval_kw)
        metrics.update({f"eval_{k}_before": v for k, v in before.items() if k != "samples"})

    controller = cfg.make_kl_controller()
    trainer = make_rlpf_trainer_class()(args=cfg.trl_args(len(kept)), processing_class=tokenizer, model=policy,
                                        ref_model=ref, reward_model=adapter, train_dataset=to_ds(kept),
                                        value_model=value, eval_dataset=to_ds(evals), kl_controller=controller,
                                        peft_config=cfg.peft_config())
    report_steps(trainer, "rlpf")
    train_resumable(trainer, cfg)
    metrics["kl_coef"] = float(trainer.args.kl_coef)  # after the controller (= kl_coef_init when fixed)
    metrics["train_whitening"] = {"calls": trainer.whiten.calls, **trainer.whiten.last}
    logged = last_logged(trainer.state.log_history, "/")
    metrics.update({f"train_{k}": v for k, v in logged.items() if k.startswith(("objective/", "policy/", "loss/"))})
    metrics["train_episodes"] = int(trainer.state.episode)
    metrics["train_reward_kinds"] = dict(Counter(d.kind for d in adapter.history))
    metrics["train_reward_flags"] = dict(Counter(f for d in adapter.history for f in d.flags))
    metrics["train_withheld_share"] = withheld_share(sum(d.withheld for d in adapter.history), len(adapter.history))
    metrics["train_withheld_causes"] = dict(Counter(d.cause for d in adapter.history if d.withheld))
    if trainer.accelerator.num_processes == 1:
        ev = evaluate_policy(trainer.accelerator.unwrap_model(trainer.model).policy, ref, tokenizer, evals, reward,
                             **eval_kw)
        metrics.update({f"eval_{k}": v for k, v in ev.items()})
    else:  # sharded policy: the last training batch's statistics stand in
        metrics.update(eval_mean_reward=logged.get("objective/scores"), eval_kl=logged.get("objective/kl"))
    metrics["sandbox_runs"] = reward.counts["sandbox_runs"]
    metrics["reward_measurement"] = {"repeats": cfg.test_repeats or "dataset", "speedup_cap": cfg.speedup_cap,
                                     "remeasure_above": cfg.remeasure_above, "clock": cfg.clock}
    return save_stage(cfg, trainer, tokenizer, metrics, started)
