"""The paper's equations, one named function each ("Performance-Aligned LLMs for Generating
Fast Code", §V). Pure functions on floats / tensors so they can be unit-tested by hand and
reused by the trainers, the evaluation and the triplet builder.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .plausibility import SpeedupPolicy, speedup_ratio

if TYPE_CHECKING:  # torch is imported where a tensor is made: the triplet builder and the CLI need none
    import torch

# §VII-C2: "We use a max margin of λ = 3 for the margin function μ(p, d_f, d_s)."
DEFAULT_MAX_MARGIN = 3.0
# Eq. 4 gives -1 to incorrect code on problems with tests.
INCORRECT_REWARD = -1.0


def _t(x) -> torch.Tensor:
    import torch

    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=torch.float64)


def perplexity(token_logprobs: Sequence[float] | torch.Tensor) -> float:
    """Eq. 1: Perplexity(X) = exp(-1/t * sum_i log p_theta(x_i | x_<i)) over the t scored tokens.

    ``token_logprobs`` are the natural-log probabilities of every scored token of the dataset
    (flattened over samples, so long samples weigh by their length as in the equation).
    """
    import torch

    lp = _t(token_logprobs).flatten()
    if lp.numel() == 0:
        raise ValueError("perplexity needs at least one token")
    return float(torch.exp(-lp.double().mean()))


def reward_model_loss(r_fast: torch.Tensor, r_slow: torch.Tensor, margin: torch.Tensor | float = 0.0) -> torch.Tensor:
    """Eq. 2: L_r = -log sigma(r_theta(p, d_f) - r_theta(p, d_s) - mu(p, d_f, d_s)), batch mean.

    TRL's RewardTrainer computes exactly this when the dataset has a ``margin`` column
    (tests/alignment/test_stages.py checks the two agree).
    """
    import torch.nn.functional as F

    r_fast, r_slow = _t(r_fast), _t(r_slow)
    return -F.logsigmoid(r_fast - r_slow - _t(margin).to(r_fast)).mean()


def adaptive_margin(fast_runtime_s: float | None, slow_runtime_s: float | None, *, is_contest: bool,
                    slow_is_correct: bool = True, max_margin: float = DEFAULT_MAX_MARGIN) -> float:
    """Eq. 3: mu(p, d_f, d_s) = min(lambda, runtime(d_s) / runtime(d_f)) if p in D_c, 0 otherwise.

    Our decision for a triplet whose d_s is an *incorrect* contest solution (the paper's 5%
    replacement; incorrect submissions are never run, so they have no runtime): incorrect
    code counts as infinitely slow, so mu = min(lambda, inf) = lambda, the largest margin.
    That matches Eq. 4, which gives incorrect code the lowest reward.
    """
    if not is_contest:
        return 0.0
    if not slow_is_correct:
        return float(max_margin)
    if fast_runtime_s is None or slow_runtime_s is None:
        raise ValueError("a contest triplet with a correct slow solution needs both runtimes")
    speedup = speedup_ratio(slow_runtime_s, fast_runtime_s)  # the one speedup policy (common.plausibility)
    if speedup.value is None:
        raise ValueError(f"Eq. 3: runtimes {fast_runtime_s!r} / {slow_runtime_s!r} are not usable "
                         f"({', '.join(speedup.flags)})")
    return float(min(max_margin, speedup.value))


def performance_reward(*, has_tests: bool, correct: bool | None = None, runtime_s: float | None = None,
                       median_runtime_s: float | None = None, reward_model_score: float | None = None,
                       policy: SpeedupPolicy = SpeedupPolicy()) -> float:
    """Eq. 4: r(p, d) = -1 if p in D_c and d incorrect;
    median_runtime(p) / runtime(d) - 1 if p in D_c and d correct; r_theta(p, d) otherwise.

    ``has_tests`` is "p in D_c": the problem has tests and a median runtime of the dataset's
    correct submissions in the language of d. Without that (synthetic problems, or a language
    the dataset has no runtimes for) the reward model scores d. The speedup median / runtime
    goes through common.plausibility (the one policy for speedups): capped at ``policy.cap``;
    a time that is not a number raises (the caller re-measures or records it, never rewards it).
    """
    if has_tests:
        if not correct:
            return INCORRECT_REWARD
        if runtime_s is None or median_runtime_s is None:
            raise ValueError("correct code on a problem with tests needs its runtime and the median runtime")
        speedup = speedup_ratio(median_runtime_s, runtime_s, policy)
        if speedup.value is None:
            raise ValueError(f"Eq. 4: not a usable runtime measurement ({', '.join(speedup.flags)})")
        return speedup.value - 1.0
    if reward_model_score is None:
        raise ValueError("a problem without tests needs the reward model's score")
    return float(reward_model_score)


def reward_accuracy(r_fast: Sequence[float] | torch.Tensor, r_slow: Sequence[float] | torch.Tensor) -> float:
    """Eq. 5: acc_reward(X) = 1/|X| * sum_{(p,d_f,d_s) in X} 1[r_theta(p, d_f) > r_theta(p, d_s)]."""
    r_fast, r_slow = _t(r_fast).flatten(), _t(r_slow).flatten()
    if r_fast.numel() == 0 or r_fast.shape != r_slow.shape:
        raise ValueError("reward_accuracy needs equally many (non-zero) fast and slow rewards")
    return float((r_fast > r_slow).double().mean())


def kl_penalized_objective(rewards: Sequence[float] | torch.Tensor, kl: Sequence[float] | torch.Tensor,
                           kl_coef: float) -> float:
    """Eq. 6: the RL objective E[r(p, d)] - gamma * KL(pi_theta || pi_SFT), estimated on samples
    (``kl`` per sample: sum over the response tokens of log pi_theta - log pi_SFT)."""
    return float(_t(rewards).double().mean() - kl_coef * _t(kl).double().mean())


def dpa_loss(policy_fast_logps: torch.Tensor, policy_slow_logps: torch.Tensor, ref_fast_logps: torch.Tensor,
             ref_slow_logps: torch.Tensor, margin: torch.Tensor | float, beta: float) -> torch.Tensor:
    """Eq. 7: L_dpa = -log sigma(beta * log(pi(d_f|p)/pi_SFT(d_f|p)) - beta * log(pi(d_s|p)/pi_SFT(d_s|p))
    - mu(p, d_f, d_s)), batch mean. Arguments are summed completion log-probs per sample."""
    import torch.nn.functional as F

    chosen = _t(policy_fast_logps) - _t(ref_fast_logps)
    rejected = _t(policy_slow_logps) - _t(ref_slow_logps)
    return -F.logsigmoid(beta * chosen - beta * rejected - _t(margin).to(chosen)).mean()


def dpa_nll_loss(fast_token_logps_sum: torch.Tensor | float, fast_tokens: torch.Tensor | int) -> torch.Tensor:
    """Not an equation of the RLPF paper: RPO's NLL term (Pang et al. 2024, "Iterative Reasoning
    Preference Optimization", Eq. 1's second term) in TRL's form: the fast program's negative
    log-likelihood per token over the batch's fast completions, -sum log pi(d_f|p) / sum |d_f| (RPO
    normalizes each sequence by its own length, then averages). DPA with
    ``nll_weight`` w > 0 minimizes Eq. 7 + w * this (TRL's ``loss_type=["sigmoid", "sft"]``); it keeps
    the chosen program likely where Eq. 7 alone lowers both (docs/alignment.md)."""
    return -_t(fast_token_logps_sum).sum() / _t(fast_tokens).sum()


def dpa_accuracy(policy_fast_logps, policy_slow_logps, ref_fast_logps, ref_slow_logps) -> float:
    """Eq. 8: acc_DPA(X) = 1/|X| * sum 1[log(pi(d_f|p)/pi_SFT(d_f|p)) > log(pi(d_s|p)/pi_SFT(d_s|p))]."""
    chosen = _t(policy_fast_logps).flatten() - _t(ref_fast_logps).flatten()
    rejected = _t(policy_slow_logps).flatten() - _t(ref_slow_logps).flatten()
    if chosen.numel() == 0:
        raise ValueError("dpa_accuracy needs at least one pair")
    return float((chosen > rejected).double().mean())

