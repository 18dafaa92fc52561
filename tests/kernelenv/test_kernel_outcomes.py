"""The kernel reward withholds only what common.outcomes allows: through the GRPO
reward function, a kernel that fails in each way it can, scored for real in the sandbox, earns
its tier's penalty; the reference's own failure is withheld and counted in the function's
per-step withheld share; a sandbox error is withheld only when the control run fails too.
(The protocol attacks on the driver are tests/kernelenv/test_hacks.py's.)"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from perfalign.kernelenv.metrics import KernelRewardTiers, kernel_outcome, kernel_reward
from perfalign.kernelenv.reward import _judge_sandbox_errors, make_reward_function
from perfalign.kernelenv.score import KernelScore

KB = Path(__file__).resolve().parents[3] / "shared" / "external" / "kernelbench"
RELU = KB / "level1" / "19_ReLU.py"
T = KernelRewardTiers()
HEAD = "import torch\nimport torch.nn as nn\n"


def _model(body: str, head: str = "") -> str:
    return HEAD + head + "class ModelNew(nn.Module):\n    def forward(self, x):\n" + \
        "".join(f"        {line}\n" for line in body.splitlines())


# name -> (completion code, verdict, reward): every one the candidate's own doing
FAILURES = {
    "format_error": ("I cannot write kernels.", "format_error", T.format_error),
    "load_error": (_model("return x", head="import a_module_that_does_not_exist\n"), "load_error", T.load_error),
    "runtime_error": (_model("raise RuntimeError('boom')"), "runtime_error", T.runtime_error),
    "timeout": (_model("while True:\n    pass"), "timeout", T.timeout),
    "incorrect": (_model("return x * 2"), "incorrect", T.incorrect),
    "memory": (_model("y = torch.empty(1 << 40, dtype=torch.uint8)\nreturn torch.relu(x) + y[0]"),
               "runtime_error", T.runtime_error),
    # the signal a seccomp kill delivers
    "killed_by_signal": (_model("import os, signal\nos.kill(os.getpid(), signal.SIGSYS)"), "runtime_error",
                         T.runtime_error),
    "kills_its_driver": (_model("import os\nos.kill(os.getppid(), 9)\nreturn torch.relu(x)"), "runtime_error",
                         T.runtime_error),
}


# scored for real here; load_error and incorrect run for real in test_score.py, a timeout costs its
# limit: those three are judged from their verdicts (test_each_failure_verdict_earns_its_tier)
REAL = sorted(set(FAILURES) - {"load_error", "incorrect", "timeout"})


def _fenced(code: str) -> str:
    return code if code.startswith("I cannot") else f"Here:\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def scorer():
    from perfalign.sandbox.environments import torch_site

    if not RELU.exists():
        pytest.skip(f"KernelBench is not at {KB} (../shared/external)")
    if torch_site().dir is None:
        pytest.skip(f"the sandbox cannot use torch: {torch_site().reason}")
    from perfalign.kernelenv import ScoreConfig, Scorer
    from perfalign.sandbox import Sandbox

    config = ScoreConfig(scale=1 / 256, compile_baseline=False, trials=5, min_trials=3, time_budget_s=0.1,
                         call_timeout_s=2.0, first_call_timeout_s=1.0)
    with Sandbox(workers=2) as sb:
        yield Scorer(config, sandbox=sb)


@pytest.fixture(scope="module")
def failed(scorer):
    from perfalign.kernelenv import load_problem

    fn = make_reward_function(scorer, {"relu": load_problem(RELU)})
    names = sorted(REAL)
    rewards = fn(prompts=["p"] * len(names), completions=[_fenced(FAILURES[n][0]) for n in names],
                 problem=["relu"] * len(names))
    return dict(zip(names, rewards)), fn.stats


# one sandboxed execution of every failure: about 45 s per candidate (torch start-ups, the
# reference timed alone), 400 s for the set on 2 loaded cores
@pytest.mark.slow
@pytest.mark.parametrize("name", REAL)
def test_each_kernel_failure_is_penalized(failed, name):
    rewards, _ = failed
    assert rewards[name] == FAILURES[name][2], (name, rewards[name])


@pytest.mark.slow
def test_a_step_of_penalties_withholds_nothing(failed):
    _, stats = failed
    assert stats[-1]["total"] == len(REAL) and stats[-1]["withheld"] == 0
    assert stats[-1]["withheld_share"] == 0.0


def test_the_references_own_failure_is_withheld_and_counted(scorer, tmp_path):
    from perfalign.kernelenv import load_problem

    broken = tmp_path / "19_ReLU_broken.py"
    broken.write_text(RELU.read_text().replace("return torch.relu(x)", "raise RuntimeError('the reference is broken')"))
    fn = make_reward_function(scorer, {"broken": load_problem(broken)})
    rewards = fn(prompts=["p", "p"], completions=[_fenced(_model("return torch.relu(x)")), "no code"],
                 problem=["broken", "broken"])
    assert rewards[0] is None  # withheld: the candidate ran nothing the reference's failure depends on
    assert rewards[1] == T.format_error  # no ModelNew: penalized whatever the reference does
    assert fn.stats[-1]["withheld"] == 1 and fn.stats[-1]["withheld_share"] == 0.5
    assert fn.stats[-1]["withheld_causes"] == {"reference_failed": 1}


def _ks(verdict="correct", flags=(), **kw):
    return KernelScore(problem="p", candidate="c", verdict=verdict, correct=verdict == "correct",
                       speedup_eager=kw.pop("se", 1.5), flags=list(flags), **kw)


class ScriptedScorer:
    """Scores as a broken or working sandbox would report them (the sandbox fault is injected:
    no test program can cause a real one); ``calls`` records what was run."""

    def __init__(self, control_verdict: str):
        self.control_verdict, self.calls = control_verdict, []

    def score_many(self, problem, candidates):
        self.calls.append(("group", len(candidates)))
        return [_ks("sandbox_error", message="sandbox runner failed") for _ in candidates]

    def score(self, problem, source, name="candidate"):
        self.calls.append(("alone", name))
        if name == "control":
            return _ks(self.control_verdict)
        return _ks("sandbox_error") if "breaks" in source else _ks("correct")


def test_a_sandbox_error_is_withheld_only_when_the_control_fails_too():
    from perfalign.kernelenv.problems import KernelProblem

    problem = KernelProblem(name="p", path=Path("p.py"), source="class Model: pass\n", level=1)
    items = [(0, "fine"), (1, "breaks the runner")]
    for control, withheld in (("correct", False), ("sandbox_error", True)):
        sc = ScriptedScorer(control)
        out = _judge_sandbox_errors(sc, problem, items, sc.score_many(problem, ["a", "b"]))
        assert out[0].verdict == "correct"  # alone, the innocent completion of the group scores
        assert out[1].verdict == "sandbox_error" and (out[1].reward is None) == withheld, out[1]
        if not withheld:
            assert out[1].reward == T.runtime_error
        assert sc.calls == [("group", 2), ("alone", "completion-0"), ("alone", "completion-1"), ("alone", "control")]


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_each_failure_verdict_earns_its_tier(name):
    """The verdicts the real runs above produce, mapped without a sandbox: never withheld."""
    _, verdict, reward = FAILURES[name]
    ks = _ks(verdict, ["cpu:cgroup"] if verdict not in ("format_error",) else [])
    assert not (kernel_outcome(ks) and kernel_outcome(ks).withheld) and kernel_reward(ks) == reward


def test_kernel_outcomes_are_an_allowlist():
    assert kernel_reward(_ks("sandbox_error")) == T.runtime_error  # no control: nothing established
    assert kernel_reward(_ks("sandbox_error", ["control:OK"])) == T.runtime_error
    assert kernel_reward(_ks("sandbox_error", ["control:SANDBOX_ERROR"])) is None
    # baseline_error: withheld only where the scorer established the reference's own failure
    assert kernel_reward(_ks("baseline_error", ["reference_failed"])) is None
    assert kernel_reward(_ks("baseline_error")) == T.runtime_error
    assert kernel_reward(_ks("baseline_error", ["cpu:cgroup"])) == T.runtime_error
    assert kernel_outcome(_ks("baseline_error", ["cpu:cgroup"])).cause == "candidate_broke_its_harness"
    assert kernel_reward(_ks("unsupported")) == T.runtime_error
    assert kernel_reward(_ks("a_verdict_nobody_knows")) == T.runtime_error
    # correct: the machine's noise (the reference alone) withheld; a hack or a fast repeat penalized
    assert kernel_reward(_ks(flags=["unmeasurable"], se=None)) is None
    assert kernel_reward(_ks(flags=["unmeasurable", "hack:reference_op:aten::relu"], se=None)) == T.flagged
    assert kernel_reward(_ks(flags=["fast_repeat"])) == T.flagged
    assert kernel_outcome(_ks()) is None and kernel_reward(_ks(se=1.5)) == 1.5
    assert dataclasses.replace(T, against="compile").against == "compile"
