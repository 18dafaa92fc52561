"""Eq. 4 under a deterministic clock (PerformanceReward(clock=...); sandbox/clock.py): the
candidate's runtime is valgrind's count and the baseline the dataset's median count in the same
unit, so the same program earns the same reward every time; a dataset measured with another
clock is refused in one line (instructions are never compared with seconds).
valgrind must be installed (scripts/setup.sh)."""
from __future__ import annotations

import pytest
from clock_programs import ANSWER, FAST, INPUT, SLOW

from perfalign.alignment.data import RewardProblem
from perfalign.alignment.performance_reward import ClockMismatch, PerformanceReward, PromptInfo
from perfalign.perfdata.submissions import count_label, language_clocks, language_count_medians
from perfalign.sandbox import Job, Limits, Sandbox, TestCase
from perfalign.sandbox import clock as clk


@pytest.fixture(scope="module")
def sb():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()
    with Sandbox(backend="bwrap", workers=1, calibrate=False) as s:
        yield s


def problem(label_clocks, median_count=None, language="cpp"):
    return RewardProblem("p", [INPUT], [ANSWER], 2.0, 256, {language: 0.01}, repeats=1,
                          label_clocks=label_clocks, median_count=median_count or {})


def response(code):
    return f"```cpp\n{code}```"


def test_the_same_program_earns_the_same_reward_in_counts(sb):
    res = sb.run_job(Job(FAST, "cpp", [TestCase(INPUT, ANSWER)], Limits(time_s=2.0, memory_mb=256),
                         clock="instructions"))
    assert res.ok and res.clock == "instructions", res.message
    base = float(res.tests[0].instructions)  # the dataset's label of this program (perfdata: count_label)
    reward = PerformanceReward({"p": problem({"cpp": "instructions"}, {"cpp": base})}, sandbox=sb, workers=1,
                               clock="instructions", cache=False)
    info = PromptInfo("prompt", "p", "cpp", "contest")
    first = reward([info, info], [response(FAST), response(SLOW)])
    again = reward([info, info], [response(FAST), response(SLOW)])
    for a, b in zip(first, again):
        assert a.kind == "execution" and a.verdict == "OK", a
        assert a.runtime_s == b.runtime_s and a.reward == b.reward  # exact, not close
    fast, slow = first
    assert fast.runtime_s == base and fast.speedup == 1.0 and fast.reward == 0.0
    assert 0.4 < slow.speedup < 0.6 and slow.reward < -0.4, slow  # twice the instructions
    assert reward.counts["sandbox_runs"] == 4  # a count is never re-measured (it would repeat itself)


def test_a_dataset_of_another_clock_is_refused():
    with pytest.raises(ClockMismatch, match="measured with the cpu clock"):
        PerformanceReward({"p": problem({"cpp": "cpu"})}, clock="instructions")
    with pytest.raises(ClockMismatch, match="measured with the instructions clock"):
        PerformanceReward({"p": problem({"cpp": "instructions"}, {"cpp": 1e6})}, clock="cpu")
    with pytest.raises(ClockMismatch):
        PerformanceReward({"p": problem({"cpp": "cycles"}, {"cpp": 1e6})}, clock="instructions")
    # Java's labels fall back to cpu under a count (the JIT): consistent, accepted
    PerformanceReward({"p": problem({"java": "cpu"}, language="java")}, clock="instructions")
    PerformanceReward({"p": problem({"cpp": "cpu"})})  # the default clock on a cpu dataset
    with pytest.raises(ValueError, match="clock must be one of"):
        PerformanceReward({}, clock="wall")


def test_labels_carry_their_clock():
    rows = {"cpp": [{"clock": "instructions", "test_clock_counts": [10.0, 30.0]},
                    {"clock": "instructions", "test_clock_counts": [40.0, 40.0]},
                    {"clock": "instructions", "test_clock_counts": [1.0, 3.0]}],
            "java": [{"clock": "cpu", "test_clock_counts": None}, {}]}
    assert count_label(rows["cpp"][0]) == 20.0 and count_label(rows["java"][0]) is None
    assert language_clocks(rows) == {"cpp": "instructions", "java": "cpu"}  # no column: cpu
    assert language_count_medians(rows) == {"cpp": 20.0}
    with pytest.raises(ValueError, match="mix clocks"):
        language_clocks({"cpp": rows["cpp"] + [{"clock": "cpu"}]})


def test_the_rlpf_stage_takes_the_datasets_clock():
    from perfalign.alignment.rlpf import RLPFStageConfig
    from perfalign.config.tables import load_config

    assert load_config(overrides=["perf.clock=cycles"]).rlpf.clock == "cycles"  # linked: one setting
    with pytest.raises(ValueError, match="clock must be one of"):
        RLPFStageConfig(clock="wall").check_values()
