"""Eq. 4 under a deterministic clock (PerformanceReward(clock=...); sandbox/clock.py): the
candidate's runtime is valgrind's count and the baseline the dataset's median count in the same
unit, so the same program earns the same reward every time; a dataset measured with another
clock is refused in one line (instructions are never compared with seconds).
valgrind must be installed (scripts/setup.sh)."""
from __future__ import annotations

import pytest
from clock_programs import ANSWER, FAST, INPUT, RECLAIM_SHARE, SLOW, counts_agree

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
        # equal but for the host's reclaim (clock_programs.counts_agree): not a timing test
        assert counts_agree(a.runtime_s, b.runtime_s) and a.reward == pytest.approx(b.reward, abs=RECLAIM_SHARE), (a, b)
    fast, slow = first
    assert counts_agree(fast.runtime_s, base) and fast.speedup == pytest.approx(1.0, abs=RECLAIM_SHARE), fast
    assert fast.reward == pytest.approx(0.0, abs=RECLAIM_SHARE), fast
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


def test_labels_carry_the_native_cpu_beside_their_count():
    """The sandbox's rule on the recorded native runs (sandbox.clock.native_cpu_s); a row from
    before the column, or with a test without runs, has none (no check, no crash)."""
    from perfalign.perfdata.submissions import NATIVE_COLUMN, language_native_medians, native_cpu_label

    rows = [{NATIVE_COLUMN: [[1.0, 1.2, 0.9], [2.0, 2.0, 2.2]]}, {NATIVE_COLUMN: [[3.0, 3.0, 3.0]]},
            {NATIVE_COLUMN: [[1.0], []]}, {}]
    assert native_cpu_label(rows[0]) == pytest.approx((3.0, 0.3))  # medians 1.0 + 2.0; (1.2 - 0.9) / 1.0
    assert native_cpu_label(rows[2]) is None and native_cpu_label(rows[3]) is None
    assert language_native_medians({"cpp": rows, "java": [{}]}) == {"cpp": pytest.approx((3.0, 0.15))}


def test_the_rlpf_stage_takes_the_datasets_clock():
    from perfalign.alignment.rlpf import RLPFStageConfig
    from perfalign.config.tables import load_config

    assert load_config(overrides=["perf.clock=cycles"]).rlpf.clock == "cycles"  # linked: one setting
    with pytest.raises(ValueError, match="clock must be one of"):
        RLPFStageConfig(clock="wall").check_values()


# The same answer three ways (input n): the reference's arithmetic loop; the attack's system calls
# (fewer counted instructions, more real CPU: kernel time is not counted); the honest twin's
# arithmetic loop of half the length (faster under both)
CROSS_CPP = r"""
#include <stdio.h>
#include <unistd.h>
int main(void){ long n; if(scanf("%ld",&n)!=1) return 1; unsigned long s=0;
  if(MODE==0) for(long i=0;i<n;i++) s+=(unsigned long)(i*i%1000003);
  else if(MODE==1) for(long i=0;i<n/7;i++) s+=(unsigned long)getppid()&1;
  else for(long i=0;i<n/2;i++) s+=(unsigned long)(i*i%1000003);
  asm volatile("" :: "r"(s)); printf("%d\n",1); return 0; }
"""
CROSS_INPUT = "2000000\n"


def _cross(mode: int) -> str:
    return CROSS_CPP.replace("MODE", str(mode))


def _dataset_row(sb) -> dict:
    """The reference measured as the CodeContests-Perf build measures a label (perfdata.perf)."""
    from perfalign.perfdata.codecontests import Submission
    from perfalign.perfdata.perf import BuildSettings
    from perfalign.perfdata.perf_batch import _measured_row

    lim = Limits(time_s=5.0, memory_mb=256)
    res = sb.run_job(Job(_cross(0), "cpp", [TestCase(CROSS_INPUT, "1\n")], lim, clock="instructions"))
    assert res.ok, res.message
    return _measured_row(Submission("p", 2, _cross(0), True, 0), "train", "k",
                         BuildSettings(clock="instructions"), res, lim)


def test_a_count_faster_only_under_the_count_is_penalized(sb, caplog):
    """Through the reward path: the attack (system calls) counts fewer instructions than the
    dataset's reference but costs more CPU beside its count: flagged and penalized. Its honest
    twin (half the arithmetic) is faster under both: rewarded. A dataset from before the native
    column is read as before: the same attack is then rewarded, flagged count_unchecked and logged."""
    from perfalign.perfdata.submissions import NATIVE_COLUMN, language_native_medians, native_cpu_label

    row = _dataset_row(sb)  # the build records the native CPU times beside the count
    assert len(row[NATIVE_COLUMN][0]) >= clk.NATIVE_REPEATS and native_cpu_label(row)[0] > 0

    prob = RewardProblem("p", [CROSS_INPUT], ["1\n"], 5.0, 256, {"cpp": 0.01}, repeats=1,
                          label_clocks={"cpp": "instructions"}, median_count={"cpp": count_label(row)},
                          native_cpu=language_native_medians({"cpp": [row]}))
    reward = PerformanceReward({"p": prob}, sandbox=sb, workers=1, clock="instructions")
    info = PromptInfo("prompt", "p", "cpp", "contest")
    attack, twin = reward([info, info], [response(_cross(1)), response(_cross(2))])
    assert count_label(row) / attack.runtime_s > 1.5 and clk.CONTRADICTED in attack.flags, attack  # fooled...
    assert attack.reward == -1.0 and not attack.withheld                       # ... the CPU time is not
    assert twin.speedup > 1.5 and twin.reward > 0.5 and not set(twin.flags) & {clk.CONTRADICTED, "count_unchecked"}
    prob.native_cpu = {}  # the same runs (cached) against a folder from before the column
    with caplog.at_level("WARNING", logger="perfalign.alignment.performance_reward"):
        old, _ = reward([info, info], [response(_cross(1)), response(_cross(2))])
    assert "count_unchecked" in old.flags and old.reward > 0 and "not checked" in caplog.text
    assert reward.counts["sandbox_runs"] == 2
