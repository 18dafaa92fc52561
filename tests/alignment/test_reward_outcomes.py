"""RLPF's reward (Eq. 4) withholds only what common.outcomes allows: a candidate that
fails in each way it can, run for real in the sandbox, earns -1; a missing baseline, a broken
sandbox (established by the control program) and an unrunnable prompt language are withheld and
counted in the withheld share that each PPO update logs."""
from __future__ import annotations

import platform
from types import SimpleNamespace

import pytest

from perfalign.alignment.data import RewardProblem
from perfalign.alignment.performance_reward import PerformanceReward, PromptInfo, RewardDetail, _Measured, batch_rewards
from perfalign.common.outcomes import PENALIZED_FLAGS, WITHHELD_CAUSES, judge, sandbox_outcome
from perfalign.common.prompts import format_response
from perfalign.sandbox import Verdict

CORRECT = "print(int(input()) * 2)"
# (language, program, the verdicts it may get): every one the candidate's own doing
FAILURES = {
    "compile_error": ("cpp", "int main( {", {"COMPILE_ERROR"}),
    "runtime_error": ("python3", "raise SystemExit(3)", {"RUNTIME_ERROR"}),
    "wrong_answer": ("python3", "print(7)", {"WRONG_ANSWER"}),
    "timeout": ("python3", "while True:\n    pass", {"TIME_LIMIT_EXCEEDED"}),
    "memory": ("python3", "x = b'x' * (1200 << 20)\nprint(len(x))", {"MEMORY_LIMIT_EXCEEDED", "RUNTIME_ERROR"}),
    "output_limit": ("python3", "import sys\nfor _ in range(80):\n    sys.stdout.write('x' * (1 << 20))",
                     {"OUTPUT_LIMIT_EXCEEDED", "RUNTIME_ERROR"}),
    "unreadable_output": ("python3", "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00\\x01' * 64)",
                          {"WRONG_ANSWER"}),
    # the right answer printed, then a crash: a result the run does not stand behind
    "forged_then_crash": ("python3", "print(6, flush=True)\nimport os\nos._exit(1)", {"RUNTIME_ERROR"}),
    # a 32-bit system call from a 64-bit program: the seccomp filter's bad-arch action kills it
    "killed_by_seccomp": ("cpp", "int main() { asm volatile(\"int $0x80\" :: \"a\"(20)); return 0; }",
                          {"RUNTIME_ERROR"}),
}


def _problem(medians=None, **kw):
    return RewardProblem("double", ["3\n"], ["6\n"], 1.0, 256,
                          {"python3": 0.05, "cpp": 0.01} if medians is None else medians, repeats=1, **kw)


def _info(language="python3"):
    return PromptInfo("P", "double", language, "contest")


class InjectedFaults:
    """The real sandbox, except that jobs whose source holds ``marker`` (every job when ``broken``)
    come back SANDBOX_ERROR: an infrastructure fault, injected where no test program can cause one."""

    def __init__(self, real, marker: str | None = None, broken: bool = False):
        self.real, self.marker, self.broken = real, marker, broken
        self.jobs: list = []

    def run_many(self, jobs, workers=None, retries=None):
        jobs = list(jobs)
        self.jobs += jobs
        faulty = [self.broken or (self.marker is not None and self.marker in j.source) for j in jobs]
        for i, bad in enumerate(faulty):
            if bad:
                yield i, SimpleNamespace(verdict=Verdict.SANDBOX_ERROR, mean_cpu_time_s=None, calibration={}, flags=[])
        real = [i for i, bad in enumerate(faulty) if not bad]
        for k, res in self.real.run_many([jobs[i] for i in real], workers=workers, retries=retries):
            yield real[k], res


@pytest.fixture(scope="module")
def failed(sandbox):
    """Every failure of FAILURES and one correct program, one batch in the real sandbox."""
    names = [n for n in FAILURES if n != "killed_by_seccomp" or platform.machine() == "x86_64"]
    reward = PerformanceReward({"double": _problem()}, sandbox=sandbox, workers=2)
    infos = [_info(FAILURES[n][0]) for n in names] + [_info()]
    responses = [format_response(FAILURES[n][1], FAILURES[n][0]) for n in names] + [format_response(CORRECT,
                                                                                                    "python3")]
    details = reward(infos, responses)
    return dict(zip(names + ["correct"], details)), reward


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_each_candidate_failure_is_penalized(failed, name):
    details, _ = failed
    if name not in details:
        pytest.skip("a 32-bit system call needs x86_64")
    d = details[name]
    assert d.verdict in FAILURES[name][2], (name, d)
    assert d.reward == -1.0 and not d.withheld and d.kind == "execution", d
    assert d.cause == d.verdict.lower() and d.cause not in WITHHELD_CAUSES


def test_a_correct_program_is_rewarded_and_nothing_withheld(failed):
    details, reward = failed
    ok = details["correct"]
    assert ok.verdict == "OK" and not ok.withheld and ok.reward > -1.0 and ok.cause == ""
    assert reward.counts["withheld"] == 0 and reward.counts["control_runs"] == 0


def test_the_candidates_own_sandbox_error_is_penalized(sandbox):
    """The candidate's SANDBOX_ERROR (its retries spent); the control program beside it runs: penalized."""
    sb = InjectedFaults(sandbox, marker="# floods the runner")
    reward = PerformanceReward({"double": _problem()}, sandbox=sb)
    d, ok = reward([_info(), _info()], [format_response("# floods the runner\n" + CORRECT, "python3"),
                                        format_response(CORRECT, "python3")])
    assert d.verdict == "SANDBOX_ERROR" and d.reward == -1.0 and not d.withheld, d
    assert d.cause == "candidate_sandbox_error"
    assert reward.counts["control_runs"] == 1 and sb.jobs[-1].source.startswith("print(")  # the control, last
    assert ok.verdict == "OK" and not ok.withheld


def test_a_broken_sandbox_is_withheld_and_stands_at_the_batch_mean(sandbox):
    """Infrastructure established: the fixed control program fails the same way right after."""
    reward = PerformanceReward({"double": _problem()}, sandbox=InjectedFaults(sandbox, broken=True))
    (d,) = reward([_info()], [format_response(CORRECT, "python3")])
    assert d.withheld and d.cause == "infrastructure" and reward.counts["withheld:infrastructure"] == 1
    # PPO cannot drop a sample: a withheld one gets the mean of the others (no signal either way)
    others = [RewardDetail(-1.0, "execution"), RewardDetail(2.0, "execution")]
    assert batch_rewards([d, *others]) == [0.5, -1.0, 2.0]
    assert batch_rewards([d]) == [0.0]


def test_no_baseline_is_withheld(sandbox):
    """The dataset has no (usable) median in the code's language: the data's fault, not the program's."""
    for medians in ({"cpp": 0.01}, {"python3": float("nan")}, {"python3": 0.0}):
        reward = PerformanceReward({"double": _problem(medians)}, sandbox=sandbox)
        (d,) = reward([_info()], [format_response(CORRECT, "python3")])
        assert d.verdict == "OK" and d.withheld and d.cause == "no_baseline" and d.kind == "correct_no_baseline", d
        assert reward.counts["withheld"] == 1


def test_measurement_faults_of_a_correct_program_are_penalized():
    """A run with a fast repeat (state kept between repeats) or a time that is not a number."""
    reward = PerformanceReward({"double": _problem()}, sandbox=object())
    key = ("double", "python3", CORRECT)
    fast = reward._detail(key, _Measured("OK", 0.01, {}, flags=("fast_repeat",)), "python3")
    assert fast.reward == -1.0 and not fast.withheld and fast.cause == "fast_repeat"
    for t in (None, float("nan"), -1.0):
        bad = reward._detail(key, _Measured("OK", t, {}), "python3")
        assert bad.kind == "invalid_measurement" and bad.reward == -1.0 and not bad.withheld, (t, bad)
    # the remeasure's SANDBOX_ERROR is judged like any other (no control that failed: penalized)
    assert reward._detail(key, _Measured("SANDBOX_ERROR", None, {}, control="OK"), "python3").reward == -1.0
    assert reward._detail(key, _Measured("SANDBOX_ERROR", None, {}, control="SANDBOX_ERROR"), "python3").withheld


def test_unsupported_language_is_withheld_only_when_asked_for():
    reward = PerformanceReward({"double": _problem()}, sandbox=object())
    m = _Measured("UNSUPPORTED_LANGUAGE", None, {})
    asked = reward._detail(("double", "java", "class A {}"), m, "java")
    switched = reward._detail(("double", "java", "class A {}"), m, "python3")
    assert asked.withheld and asked.cause == "unsupported_task_language"
    assert switched.reward == -1.0 and not switched.withheld


def test_the_policy_is_an_allowlist():
    assert judge("something_never_seen").action == "penalize"
    assert all(judge(c).withheld for c in WITHHELD_CAUSES)
    assert sandbox_outcome("SANDBOX_ERROR").action == "penalize"  # no control: nothing established
    assert sandbox_outcome("SANDBOX_ERROR", control_verdict="OK").action == "penalize"
    assert sandbox_outcome("SANDBOX_ERROR", control_verdict="SANDBOX_ERROR").withheld
    assert sandbox_outcome("UNSUPPORTED_LANGUAGE").action == "penalize"
    assert "fast_repeat" in PENALIZED_FLAGS


def test_each_ppo_update_logs_its_withheld_share():
    """RLPFTrainer.log adds ``objective/withheld_share`` of the rollouts scored since the last log."""
    from perfalign.alignment.rlpf_trainer import make_rlpf_trainer_class, withheld_metrics

    assert withheld_metrics([True, False, False, False]) == {"objective/withheld_share": 0.25,
                                                             "objective/withheld": 1.0}
    assert withheld_metrics([])["objective/withheld_share"] == 0.0
    history = [RewardDetail(0.0, "sandbox_error", withheld=True, cause="infrastructure"),
               RewardDetail(-1.0, "execution")]
    trainer = SimpleNamespace(accelerator=SimpleNamespace(unwrap_model=lambda m: m, device="cpu"),
                              reward_model=SimpleNamespace(history=history), _rewards_logged=0)
    since = make_rlpf_trainer_class()._withheld_since_last_log
    assert since(trainer)["objective/withheld_share"] == 0.5
    history += [RewardDetail(1.0, "execution")] * 4  # the next update: nothing withheld
    assert since(trainer)["objective/withheld_share"] == 0.0 and trainer._rewards_logged == 6
