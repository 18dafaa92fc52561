"""The kernel scorer's timing judgement (no sandbox): the measurement layer's statistics on
interleaved rounds, the noise gate, and whose fault the noise is (``kernelenv.score.judge_timing``)."""
from __future__ import annotations

import math
import random

import pytest

from perfalign.kernelenv.score import judge_timing
from perfalign.measure import timing_stats as ts
from perfalign.measure.timing_stats import NoiseGate


def _runs(rng, center, rel_sd, n):
    return [center * (1 + rng.gauss(0, rel_sd)) for _ in range(n)]


def test_statistics_are_the_harness_equations():
    assert ts.spread([1.0, 2.0, 3.0]) == pytest.approx(1.0)                      # stdev below 5 runs
    assert ts.spread([1.0, 1.0, 1.0, 1.0, 100.0]) == 0.0                          # MAD from 5: robust
    assert ts.rel_se_of_cost([2.0, 2.0, 2.0]) == 0.0
    runs, null = [3.0, 3.2, 2.8, 3.1, 2.9], [1.0, 1.1, 0.9, 1.0, 1.0]
    expected = ts.MEDIAN_EFFICIENCY * math.sqrt(ts.spread(runs) ** 2 / 5 + ts.spread(null) ** 2 / 5) / 2.0
    assert ts.rel_se_of_cost(runs, null) == pytest.approx(expected)
    assert ts.rel_se_of_cost([1.0]) is None and ts.rel_se_of_cost([1.0, 1.0], [2.0, 2.0]) == math.inf
    assert ts.combined_rel_se(0.03, 0.04) == pytest.approx(0.05) and ts.combined_rel_se(0.1, None) is None
    assert ts.round_ratio_speedup([(2.0, 1.0), (4.0, 1.0), (3.0, 1.0)]) == 3.0
    # the harness's sweep case: medians from different regimes, per-round ratios at 1
    pairs = [(1.0, 1.0), (1.0, 1.0), (1.14, 1.14), (1.14, 1.14), (1.14, 1.14)]
    assert ts.shift(pairs, 1.0, 1.14) == pytest.approx(math.log(1.14))
    assert ts.shift(pairs[:2], 1.0, 1.14) == 0.0 and ts.shift([(1, 0)] * 3, 1.0, 1.0) == 0.0
    gate = NoiseGate()
    assert ts.precision(0.02, 0.0, gate, 9).decision == "ok"
    assert ts.precision(0.05, 0.0, gate, 9).decision == "imprecise"
    assert ts.precision(0.07, 0.0, gate, 9).decision == "unmeasurable"
    assert ts.precision(0.01, 0.07, gate, 9).decision == "unmeasurable" and "shifted" in ts.precision(
        0.01, 0.07, gate, 9).reason
    # slower whatever the noise: reported (imprecise), not withheld; near 1 the noise still decides
    assert ts.precision(0.2, 0.1, gate, 9, speedup=0.05).decision == "imprecise"
    assert ts.precision(0.2, 0.0, gate, 9, speedup=0.6).decision == "unmeasurable"
    assert ts.optimistic_bound(0.1, 0.1, 0.0) == pytest.approx(0.1 * math.exp(0.3))
    assert ts.needs_more_rounds([0.04, 0.01], 0.0, gate) and not ts.needs_more_rounds([0.02, 0.01], 0.0, gate)
    assert not ts.needs_more_rounds([0.9, 0.01], 0.0, gate, futile=0.5)          # futile: stop
    assert ts.needs_more_rounds([0.01], 0.04, gate)                                # the estimates disagree


def test_a_quiet_pair_is_reported():
    rng = random.Random(1)
    ref, cand = _runs(rng, 2e-3, 0.01, 20), _runs(rng, 1e-3, 0.01, 20)
    t = judge_timing(ref, cand, _runs(rng, 2e-3, 0.01, 10))
    assert t.speedup == pytest.approx(2.0, rel=0.03) and "unmeasurable" not in t.flags and not t.message
    assert t.info["decision"] == "ok" and t.info["rounds"] == 20


def test_noise_with_a_noisy_reference_alone_is_the_machines_fault():
    rng = random.Random(2)
    ref, cand, alone = _runs(rng, 1e-3, 0.4, 30), _runs(rng, 1e-3, 0.4, 30), _runs(rng, 1e-3, 0.4, 10)
    t = judge_timing(ref, cand, alone)
    assert t.speedup is None and t.flags == ["unmeasurable"] and t.info["blame"] == "machine"
    assert "withheld" in t.message


@pytest.mark.parametrize("noisy", ["candidate", "reference_beside_it"])
def test_noise_only_beside_the_candidate_is_its_own(noisy):
    """The reference alone was precise: noise that appears with the candidate (its own erratic
    calls, or the reference disturbed beside it) is scored at a pessimistic bound, never withheld
    and never above the unbounded estimate."""
    rng = random.Random(3)
    alone = _runs(rng, 2e-3, 0.01, 10)
    if noisy == "candidate":
        ref, cand = _runs(rng, 2e-3, 0.01, 30), _runs(rng, 1e-3, 0.5, 30)
    else:
        ref, cand = _runs(rng, 2e-3, 0.5, 30), _runs(rng, 1e-3, 0.01, 30)
    t = judge_timing(ref, cand, alone)
    assert "erratic_timing" in t.flags and "unmeasurable" not in t.flags and t.info["blame"] == "candidate"
    assert t.speedup is not None and t.speedup < t.info["estimate"]
    assert t.speedup < 0.8 * t.info["estimate"]


def test_gaming_by_variance_gains_nothing():
    """A candidate fast on half its calls and slow on the others (median at the slow side or
    between) earns less than an honest steady kernel at its median time."""
    rng = random.Random(4)
    ref, alone = _runs(rng, 2e-3, 0.01, 30), _runs(rng, 2e-3, 0.01, 10)
    steady = judge_timing(ref, _runs(rng, 1e-3, 0.01, 30), alone)
    erratic = judge_timing(ref, [1e-4 if i % 2 else 1.9e-3 for i in range(30)], alone)
    assert "erratic_timing" in erratic.flags and erratic.speedup < steady.speedup


def test_a_shift_within_the_session_is_measured_by_the_rounds():
    """Medians from different regimes (the machine slowed by 30% half way, one round with the
    candidate's slow run beside the reference's fast one) disagree with the per-round ratios: the
    paired estimate reports the mean cost ratio (ten rounds at 1.0, one at 1.3), not the medians'
    0.77."""
    ref = [1e-3] * 6 + [1.3e-3] * 5
    cand = [1e-3] * 5 + [1.3e-3] * 6
    t = judge_timing(ref, cand, [1e-3] * 10)
    assert t.info["shift"] > 0.06 and t.info["rule"] == "paired" and t.flags == ["paired_timing"]
    assert t.speedup == pytest.approx(11 / 11.3)


def test_only_the_machines_noise_withholds_the_reward():
    from perfalign.kernelenv import KernelScore, kernel_reward

    rng = random.Random(5)
    machine = judge_timing(_runs(rng, 1e-3, 0.4, 30), _runs(rng, 1e-3, 0.4, 30), _runs(rng, 1e-3, 0.4, 10))
    own = judge_timing(_runs(rng, 1e-3, 0.01, 30), _runs(rng, 1e-3, 0.5, 30), _runs(rng, 1e-3, 0.01, 10))

    def score(t, extra=()):
        return KernelScore("p", "c", "correct", True, speedup_eager=t.speedup, flags=[*t.flags, *extra],
                           message=t.message)

    assert kernel_reward(score(machine)) is None                        # withheld: the machine's
    assert kernel_reward(score(own)) == pytest.approx(own.speedup)      # scored: its own noise
    assert kernel_reward(score(machine, ["hack:reference_op:aten::tanh"])) < 0  # a hack is never withheld
    # a kernel 20x slower than its reference on the same noisy machine: its penalty stands
    slow = judge_timing(_runs(rng, 1e-3, 0.4, 30), _runs(rng, 2e-2, 0.4, 30), _runs(rng, 1e-3, 0.4, 10))
    assert slow.speedup is not None and slow.speedup < 0.2 and "imprecise_timing" in slow.flags, slow
    assert kernel_reward(score(slow)) == pytest.approx(slow.speedup)
