"""The contest protocol's extra rounds priced in time (timing_stats.rounds_affordable): a short
program whose rounds are imprecise gets rounds past ``max_repeats`` until the budget of measured
CPU time is spent (at most ``max_budget_repeats``); a costly one keeps the round cap; a candidate
that makes its own rounds costly gets fewer rounds, and no better score than its honest twin.

The rounds run real programs in the sandbox; the busy host's bimodal rounds (a short program's
interpreter start-up, 1x or ~1.3x) are laid on the measured CPU times by a seeded wrapper, so
that the estimate is imprecise on every run of the test, not only on a loaded host."""
from __future__ import annotations

import dataclasses
import math
import random

import pytest
from timed_programs import chain_program

from perfalign.measure.contest import ContestSettings, paired_score
from perfalign.measure.harness import ProbeSettings
from perfalign.measure.timing_stats import rounds_affordable
from perfalign.sandbox import Job, Limits, TestCase

# a latency-bound multiply chain (tests/fixtures/timed_programs.py); the burn: ~0.3 s more CPU on 7
# runs in 8 (the clock's bits), the honest twin reads the clock too and skips it
BURN = ("timespec t; clock_gettime(CLOCK_MONOTONIC, &t); "
        "if ({on} && ((t.tv_nsec >> 10) & 7)) {{ volatile unsigned long long w = work(200000000); (void)w; }}")
SHORT, COSTLY = 100_000, 60_000_000  # ~0.3 ms and ~0.2 s of work per run
SETTINGS = ContestSettings(repeats=3, max_repeats=5, round_budget_s=0.3, max_budget_repeats=15)


def job(n: int, burn: bool = False) -> Job:
    source = chain_program(prelude=BURN.format(on=int(burn)))
    return Job(source, "cpp", [TestCase(f"{n}\n", None)], Limits(time_s=10))


class _Bimodal:
    """The sandbox, each run's measured CPU times scaled by 1 or 1.3 (seeded): a busy host's rounds."""

    def __init__(self, sandbox, seed: int):
        self.sandbox, self.rng = sandbox, random.Random(seed)

    def run_job_retrying(self, job, retries=None):
        res = self.sandbox.run_job_retrying(job, retries)
        f = self.rng.choice((1.0, 1.3))
        tests = [dataclasses.replace(t, cpu_time_s=t.cpu_time_s * f, cpu_times_s=[c * f for c in t.cpu_times_s])
                 if t.cpu_time_s is not None else t for t in res.tests]
        return dataclasses.replace(res, tests=tests)


def test_the_round_cap_is_priced_in_the_rounds_own_time():
    assert rounds_affordable(3, 100.0, 5, 2.0, 25)          # up to max_repeats whatever they cost
    assert rounds_affordable(5, 0.1, 5, 2.0, 25)            # cheap: past it, while 7/5 of 0.1 s fits in 2 s
    assert not rounds_affordable(5, 1.5, 5, 2.0, 25)        # 7/5 of 1.5 s would not
    assert not rounds_affordable(9, 18.0, 9, 2.0, 25)       # 1 s programs keep today's cap
    assert not rounds_affordable(25, 0.01, 5, 2.0, 25)      # the hard cap, however cheap
    assert not rounds_affordable(5, 0.01, 5, 0.0, 25)      # a zero budget: today's cap


def test_the_settings_come_from_the_profile_in_one_place():
    probe = ProbeSettings(max_repeats=5, round_budget_s=0.7, max_budget_repeats=11)
    s = ContestSettings.from_probe(probe)
    assert (s.repeats, s.max_repeats, s.round_budget_s, s.max_budget_repeats) == (3, 5, 0.7, 11)
    assert ContestSettings().round_budget_s == ProbeSettings().round_budget_s
    assert ProbeSettings(max_repeats=9, max_budget_repeats=4).max_budget_repeats == 9
    with pytest.raises(ValueError, match="round_budget_s"):
        ProbeSettings(round_budget_s=-1).check_values()


def test_short_imprecise_rounds_run_past_max_repeats_costly_ones_do_not(sandbox):
    short, _ = paired_score(_Bimodal(sandbox, 1), [job(SHORT)], job(SHORT), SETTINGS, "short")
    assert short.verdict == "OK", short
    assert SETTINGS.max_repeats < short.rounds <= SETTINGS.max_budget_repeats, short
    costly, _ = paired_score(_Bimodal(sandbox, 1), [job(COSTLY)], job(COSTLY), SETTINGS, "costly")
    assert costly.verdict == "OK" and costly.rounds == SETTINGS.max_repeats, costly
    # the short pair, the same program on both sides, within its own error band of 1
    assert abs(math.log(short.speedup)) <= 4 * (short.rel_se or 0.0) + 0.05, short


def test_a_candidate_making_its_rounds_costly_gets_fewer_rounds_and_no_gain(sandbox):
    """Hostile: the short program plus a burst of CPU on most runs, which spends the budget so that
    its rounds stop at the cap; its honest twin (the same work, no burst) gets its rounds. Fewer
    rounds leave its estimate wider, never higher: it scores no better than its twin."""
    twin, _ = paired_score(_Bimodal(sandbox, 2), [job(SHORT)], job(SHORT), SETTINGS, "twin")
    hostile, _ = paired_score(_Bimodal(sandbox, 2), [job(SHORT)], job(SHORT, burn=True), SETTINGS, "hostile")
    assert twin.verdict == hostile.verdict == "OK", (twin, hostile)
    assert hostile.rounds == SETTINGS.max_repeats < twin.rounds, (hostile, twin)
    assert hostile.speedup <= twin.speedup * math.exp(4 * (twin.rel_se or 0.0) + 0.05), (hostile, twin)
