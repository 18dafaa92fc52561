"""pass@k (Eq. 9) and speedup_n@k (Eq. 10) against small cases computed by hand."""
from __future__ import annotations

import itertools
import random
from math import comb

import pytest

from perfalign.evaluation.metrics import mean_pass_at_k, pass_at_k, sample_speedup, speedup_at_k, speedup_n_at_k


def test_pass_at_k_by_hand():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)              # c / n
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)       # 1 - C(3,2)/C(5,2)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)       # 1 - C(3,3)/C(5,3)
    assert pass_at_k(5, 2, 4) == 1.0                             # n - c < k: always a correct one
    assert pass_at_k(20, 0, 1) == 0.0
    assert pass_at_k(20, 20, 1) == 1.0
    assert pass_at_k(1, 1, 1) == 1.0
    # Eq. 9: the mean over prompts
    assert mean_pass_at_k([(5, 2), (5, 0), (5, 5)], 1) == pytest.approx((0.4 + 0 + 1) / 3)


def test_pass_at_k_is_the_probability_over_k_subsets():
    rng = random.Random(0)
    for _ in range(20):
        n = rng.randint(1, 8)
        correct = [rng.random() < 0.4 for _ in range(n)]
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(correct, k))
            assert pass_at_k(n, sum(correct), k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def test_speedup_at_k_by_hand():
    s = [0.0, 1.0, 2.0, 4.0]
    assert speedup_at_k(s, 1) == pytest.approx(7 / 4)             # mean
    # k = 2: the 6 pairs have maxima 1, 2, 4, 2, 4, 4 -> 17 / 6
    assert speedup_at_k(s, 2) == pytest.approx(17 / 6)
    # k = 3: the 4 triples have maxima 2, 4, 4, 4 -> 14 / 4
    assert speedup_at_k(s, 3) == pytest.approx(14 / 4)
    assert speedup_at_k(s, 4) == pytest.approx(4.0)                # the max
    assert speedup_at_k([3.0, 1.0], 1) == pytest.approx(2.0)       # order does not matter
    assert speedup_at_k([0.0, 0.0], 2) == 0.0                      # no correct sample -> 0
    # Eq. 10: the mean over prompts
    assert speedup_n_at_k([[0.0, 1.0, 2.0, 4.0], [2.0, 2.0, 2.0, 2.0]], 2) == pytest.approx((17 / 6 + 2) / 2)


def test_speedup_at_k_is_the_expected_max_over_k_subsets():
    rng = random.Random(1)
    for _ in range(20):
        n = rng.randint(1, 7)
        s = [0.0 if rng.random() < 0.3 else rng.uniform(0.1, 5) for _ in range(n)]
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(s, k))
            assert len(subsets) == comb(n, k)
            assert speedup_at_k(s, k) == pytest.approx(sum(max(x) for x in subsets) / len(subsets))


def test_incorrect_samples_contribute_zero_and_stay_in_n():
    assert sample_speedup(False, 1.0, 0.1) == 0.0
    assert sample_speedup(False, 1.0, None) == 0.0
    assert sample_speedup(True, 1.0, 0.25) == pytest.approx(4.0)
    assert sample_speedup(True, 1.0, 0.0) > 0  # timer resolution: finite
    # 1 correct 2x sample among 4: speedup@1 = 2 / 4, not 2
    assert speedup_at_k([sample_speedup(c, 1.0, 0.5) for c in (True, False, False, False)], 1) == pytest.approx(0.5)


def test_metric_input_errors():
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 2, 6)
    with pytest.raises(ValueError):
        pass_at_k(0, 0, 1)
    with pytest.raises(ValueError):
        speedup_at_k([], 1)
    with pytest.raises(ValueError):
        speedup_at_k([1.0, -1.0], 1)
    with pytest.raises(ValueError, match="empty"):
        mean_pass_at_k([], 1)
    with pytest.raises(ValueError, match="empty"):
        speedup_n_at_k([], 1)
    with pytest.raises(ValueError):
        sample_speedup(True, 1.0, None)
