"""The two evaluation metrics of the paper (§VI-A): pass@k (Eq. 9) and speedup_n@k (Eq. 10).

Both are per-prompt estimators averaged over the set of prompts P. Inputs are plain numbers so
the functions can be checked by hand (tests/evaluation/test_metrics.py).
"""
from __future__ import annotations

from math import comb
from typing import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one prompt (Chen et al. 2021; the bracket of Eq. 9):
    ``1 - C(n - c, k) / C(n, k)``, the probability that at least one of k samples drawn without
    replacement from the n generated samples, c of them correct, is correct."""
    _check_nk(n, k)
    if not 0 <= c <= n:
        raise ValueError(f"pass@k: need 0 <= c <= n, got c={c}, n={n}")
    if n - c < k:  # every k-subset holds a correct sample
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """Eq. 9: pass@k averaged over the prompts P; ``counts`` holds one (n, c) pair per prompt."""
    if not counts:
        raise ValueError("pass@k over an empty set of prompts is undefined")
    return sum(pass_at_k(n, c, k) for n, c in counts) / len(counts)


def sample_speedup(correct: bool, baseline_s: float, runtime_s: float | None) -> float:
    """Speedup of one sample over the baseline, T*/T. An incorrect sample (wrong answer, compile
    or runtime error, time limit, no code) contributes a speedup of exactly 0 — as if its
    runtime were infinite — and stays in the n samples of Eq. 10."""
    if not correct:
        return 0.0
    if runtime_s is None or baseline_s is None or baseline_s <= 0:
        raise ValueError("a correct sample needs a measured runtime and a positive baseline")
    return baseline_s / max(runtime_s, 1e-9)  # a 0 s reading (timer resolution) stays finite


def speedup_at_k(speedups: Sequence[float], k: int) -> float:
    """Expected maximum speedup of one prompt when k of its n samples are drawn without
    replacement (the inner sum of Eq. 10, ParEval's speedup_n@k, Nichols et al. 2024):
    with the speedups sorted ascending s_(1) <= ... <= s_(n),
    ``sum_j C(j - 1, k - 1) / C(n, k) * s_(j)`` — s_(j) is the maximum of exactly
    C(j - 1, k - 1) of the C(n, k) subsets. Incorrect samples must be passed as 0
    (see ``sample_speedup``), so a prompt without a correct sample scores 0.

    Note: ParEval's released analysis script (analysis/metrics.py) instead drops incorrect
    samples before this sum (n becomes the number of correct samples) and so drops prompts
    without any correct sample; that conditional variant scores higher and is not used here."""
    n = len(speedups)
    _check_nk(n, k)
    if any(s < 0 for s in speedups):
        raise ValueError("speedups must be >= 0 (0 for incorrect samples)")
    ordered = sorted(speedups)
    total = comb(n, k)
    return sum(comb(j - 1, k - 1) * s for j, s in enumerate(ordered, start=1)) / total


def speedup_n_at_k(per_prompt: Sequence[Sequence[float]], k: int) -> float:
    """Eq. 10: speedup_n@k averaged over the prompts P; one list of n speedups per prompt."""
    if not per_prompt:
        raise ValueError("speedup_n@k over an empty set of prompts is undefined")
    return sum(speedup_at_k(s, k) for s in per_prompt) / len(per_prompt)


def _check_nk(n: int, k: int) -> None:
    if n < 1:
        raise ValueError("need at least one sample per prompt")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
