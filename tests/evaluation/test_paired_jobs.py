"""The batch evaluation (evaluation/sandbox_jobs.score_jobs) times every correct program by the
contest protocol of `eval score` (measure/contest.paired_score): beside its baseline in interleaved
rounds, with a CPU-bound process of the test's own beside it. The reference scores ~1 against
itself and a control doing the work twice ~0.5, each within a band from the run's own error
estimate; a candidate cannot choose to run before or after its baseline, and one that cheats on
some runs is caught by the runs it is timed in."""
from __future__ import annotations

import math

import pytest
from timed_programs import chain_program

from perfalign.evaluation.config import EvalConfig
from perfalign.evaluation.records import EvalPrompt, ScoreRun
from perfalign.evaluation.sandbox_jobs import score_jobs
from perfalign.evaluation.tasks.codecontests import ContestSpec
from perfalign.measure.contest import ContestSettings, paired_score
from perfalign.measure.harness import ProbeSettings
from perfalign.sandbox import Job, Limits, TestCase

# ~30 ms of a latency-bound multiply chain per run (tests/fixtures/timed_programs.py)
N = 30_000_000
# a wrong answer at once on about half of its runs (the clock's parity): right only when it did the work
LUCKY = "timespec t; clock_gettime(CLOCK_MONOTONIC, &t); if ((t.tv_nsec >> 10) & 1) { puts(\"0\"); return 0; }"
SIGMAS = 4.0  # the band: this many of the score's own estimated relative errors...
FLOOR = 0.05  # ...plus this (per-process factors a run's rounds cannot see)


def program(reps: int = 1, cheat: str = "") -> str:
    return chain_program(reps, cheat)


@pytest.fixture(scope="module")
def tests(sandbox):
    out = sandbox.run_job(Job(program(), "cpp", [TestCase(f"{N}\n", None)], Limits(time_s=10), keep_output=True))
    assert out.ok, out.message
    return [TestCase(f"{N}\n", out.tests[0].output)]


def _within(speedup: float, truth: float, rel_se: float | None) -> bool:
    return abs(math.log(speedup / truth)) <= SIGMAS * (rel_se or 0.0) + FLOOR


@pytest.mark.timing
def test_the_batch_path_pairs_every_correct_program_with_its_baseline(sandbox, tests, busy):
    spec = ContestSpec("p", tests, Limits(time_s=10), {"python3": 1.0})
    ref = program()
    prompt = EvalPrompt("codecontests", "p", "write it", "cpp", "cpu", spec, {"reference": ref})
    fence = "```{}\n{}\n```".format
    responses = {"ref": [[fence("cpp", ref)]], "slow": [[fence("cpp", program(reps=2))]],
                 "wrong": [[fence("cpp", program(cheat='puts("1"); return 0;'))]], "none": [["   "]]}
    run = ScoreRun(sandbox, EvalConfig(probe=ProbeSettings(repeats=3, max_repeats=7)))
    samples, baselines, _ = score_jobs([prompt], responses, run)
    by = {s.model: s for s in samples}
    same, slow = by["ref"], by["slow"]
    assert same.correct and slow.correct and same.verdict == slow.verdict == "OK", (same, slow)
    assert len(same.round_speedups) >= 3 and same.rel_se is not None, same  # timed in paired rounds
    assert _within(same.speedup, 1.0, same.rel_se), same
    assert _within(slow.speedup, 0.5, slow.rel_se), slow
    assert by["wrong"].verdict == "WRONG_ANSWER" and by["wrong"].speedup == 0 and not by["wrong"].round_speedups
    assert by["none"].verdict == "NO_CODE"
    b = baselines["p"]
    assert b.verdict == "OK" and len(b.run_runtimes_s) >= 6 and b.runtime_s > 0  # its rounds beside both


class _Recorder:
    """The sandbox, logging which program each run was (the order of a round)."""

    def __init__(self, sandbox):
        self.sandbox, self.log = sandbox, []

    def run_job_retrying(self, job, retries=None):
        self.log.append(job.source)
        return self.sandbox.run_job_retrying(job, retries)


def test_a_candidate_cannot_choose_its_place_in_a_round(sandbox):
    """A fixed order would give the candidate a fixed predecessor (the baseline's warm state) or a
    fixed successor (whatever it leaves behind): the order is drawn per round from a secret seed."""
    small = [TestCase("1000\n", None)]
    base, cand = Job(program(), "cpp", small), Job(program(reps=2), "cpp", small)
    rec = _Recorder(sandbox)
    score, _ = paired_score(rec, [base], cand, ContestSettings(repeats=16, max_repeats=16, max_budget_repeats=16))
    assert score.verdict == "OK" and len(rec.log) == 32
    first = [rec.log[i] == cand.source for i in range(0, 32, 2)]
    assert 0 < sum(first) < 16, first  # both orders (all 16 alike: 2 in 65,536 by chance)


@pytest.mark.parametrize("attempt", range(2))
def test_a_candidate_right_on_some_runs_only_gains_nothing(sandbox, tests, attempt):
    """Right (doing the work) on some runs, a fast wrong answer on the others: every run it is timed
    in is checked, so it scores as wrong, or, where every run happened to be right, as its honest twin."""
    spec = ContestSpec("p", tests, Limits(time_s=10), {})
    ref = program()
    prompt = EvalPrompt("codecontests", "p", "write it", "cpp", "cpu", spec, {"reference": ref})
    run = ScoreRun(sandbox, EvalConfig(probe=ProbeSettings(repeats=3, max_repeats=5)))
    samples, _, _ = score_jobs([prompt], {"lucky": [["```cpp\n" + program(cheat=LUCKY) + "\n```"]]}, run)
    s = samples[0]
    if s.verdict == "OK":
        assert _within(s.speedup, 1.0, s.rel_se), s
    else:
        assert s.verdict == "WRONG_ANSWER" and s.speedup == 0 and not s.correct, s
