"""Contest scoring under a deterministic clock (ContestSettings.clock / EvalConfig.clock): the
baseline re-run beside the candidate and the candidate are both counted by valgrind, so the same
program scores the same every time and the report says which clock measured it.
valgrind must be installed (scripts/setup.sh)."""
from __future__ import annotations

import pytest
from clock_programs import ANSWER, FAST, RECLAIM_SHARE, SLOW, N, counts_agree

from perfalign.evaluation.config import EvalConfig
from perfalign.measure.contest import ContestProblem, ContestSettings, score_contest
from perfalign.measure.harness import ProbeSettings
from perfalign.sandbox import Limits, Sandbox, TestCase
from perfalign.sandbox import clock as clk

TASK = ContestProblem("p", [TestCase(f"{N}\n", ANSWER), TestCase(f"{N // 2}\n", None)],
                      Limits(time_s=2.0, memory_mb=256), [(FAST, None)], "cpp", "test")


@pytest.fixture(scope="module")
def sb():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()
    with Sandbox(backend="bwrap", workers=1, calibrate=False) as s:
        yield s


def test_contest_scores_in_counts_are_exact(sb):
    settings = ContestSettings(repeats=2, clock="instructions")
    same, info = score_contest(sb, TASK, FAST, settings)
    assert same.verdict == "OK" and same.clock == "instructions" and info["clock"] == "instructions", same
    # equal but for the host's reclaim (clock_programs.counts_agree), the speed-up within its own error
    assert counts_agree(same.runtime_s, same.baseline_s, whole=False) and same.runtime_s > 1e5, same  # a count
    assert abs(same.speedup - 1.0) <= 3 * same.rel_se, same
    slow, _ = score_contest(sb, TASK, SLOW, settings)
    again, _ = score_contest(sb, TASK, SLOW, settings)
    # 2x the work; the count prices the start-up's page faults too (~1M instructions): a little over 0.5
    assert 0.4 < slow.speedup < 0.65 and counts_agree(slow.runtime_s, again.runtime_s, whole=False), (slow, again)
    assert abs(slow.speedup / again.speedup - 1) <= RECLAIM_SHARE, (slow, again)


def test_the_eval_config_checks_its_clock():
    assert EvalConfig().probe.clock == "cpu"
    with pytest.raises(ValueError, match="clock must be one of"):
        EvalConfig(probe=ProbeSettings(clock="wall")).check_values()
    with pytest.raises(ValueError, match="clock must be one of"):
        ContestSettings(clock="seconds")


def test_the_eval_contest_task_counts_samples_and_never_uses_seconds_as_a_baseline(sb):
    from perfalign.evaluation.tasks.codecontests import ContestSpec

    spec = ContestSpec("p", TASK.tests, TASK.limits, {"cpp": 0.01, "python3": 0.02}, clock="instructions")
    first, again = (spec.measure(sb.run_job(spec.job(FAST, "cpp"))) for _ in range(2))
    assert first.correct and counts_agree(first.runtime_s, again.runtime_s, whole=False) and first.runtime_s > 1e5
    assert len(first.times_s) == 2
    assert spec.baseline_s("python3") is None  # the dataset's median is CPU seconds: no baseline under a count
    assert ContestSpec("p", TASK.tests, TASK.limits, {"python3": 0.02}).baseline_s("python3") == 0.02


# the same answer by arithmetic (the baseline) or by system calls, whose kernel time no count prices
LOOP = r"""#include <stdio.h>
#include <unistd.h>
int main(void){ long n; if(scanf("%ld",&n)!=1) return 1; unsigned long s=0;
  for(long i=0;i<WORK;i++) s+=STEP; printf("%lu\n",s>0); return 0; }
"""
ARITH = LOOP.replace("WORK", "n").replace("STEP", "(unsigned long)(i*i%1000003)")
SYSCALLS = LOOP.replace("WORK", "n*3/20").replace("STEP", "(unsigned long)getppid()&1")


def test_a_contest_score_faster_only_under_the_count_gets_no_credit(sb):
    """The protocol both contest paths share checks a count against the CPU time run beside it."""
    task = ContestProblem("p", [TestCase("2000000\n", "1\n")], Limits(time_s=5.0, memory_mb=256), [(ARITH, None)],
                          "cpp", "test")
    score, _ = score_contest(sb, task, SYSCALLS, ContestSettings(repeats=2, clock="instructions"))
    assert score.verdict == "OK" and score.raw_speedup > 1.5, score  # the count alone is fooled...
    assert clk.CONTRADICTED in score.flags and score.speedup == 0.0, score  # ...the CPU time beside it is not
