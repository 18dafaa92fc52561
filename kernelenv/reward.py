"""The kernel reward as a TRL reward function: ``f(prompts=, completions=, problem=..., **columns)``
returns one reward per completion (``kernelenv.kernel_reward``: correctness-gated speedup, tiered
failures, None only where common.outcomes withholds). Completions of the same problem are
scored together in one sandboxed execution (``Scorer.score_many``).

A group whose execution failed the sandbox is scored again one completion at a time; one still
failing is judged by a control run (the problem's own Model as the candidate, right after):
withheld when the control fails the same way, penalized when it does not. The function's
``stats`` hold, per call (one GRPO step), the withheld share and its causes."""
from __future__ import annotations

import re
from collections import defaultdict

from perfalign.common.outcomes import WithheldTally

from .metrics import CONTROL_FLAG, kernel_outcome, kernel_reward
from .problems import KernelProblem, reference_candidate
from .score import Scorer

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)


def extract_code(completion) -> str:
    """The last fenced Python block of a completion (chat or plain text), else the whole text."""
    if isinstance(completion, list):  # conversational: the last message's content
        completion = completion[-1].get("content", "") if completion else ""
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(completion or "")]
    py = [b for tag, b in blocks if tag in ("python", "py", "python3", "")]
    return (py or [b for _, b in blocks] or [completion or ""])[-1]


def make_reward_function(scorer: Scorer, problems: dict[str, KernelProblem]):
    """A GRPOTrainer reward function; the dataset's ``problem`` column names a key of ``problems``."""

    stats: list[dict] = []

    def kernel_rewards(prompts=None, completions=None, problem=None, **_):
        rewards: list = [None] * len(completions)
        groups = defaultdict(list)
        tally = WithheldTally()
        for i, (name, completion) in enumerate(zip(problem, completions)):
            groups[name].append((i, extract_code(completion)))
        for name, items in groups.items():
            scores = scorer.score_many(problems[name], [(f"completion-{i}", code) for i, code in items])
            scores = _judge_sandbox_errors(scorer, problems[name], items, scores)
            for (i, _), s in zip(items, scores):
                rewards[i] = s.reward
                tally.add(kernel_outcome(s))
        stats.append(tally.to_dict())
        return rewards

    kernel_rewards.__name__ = "kernel_reward"
    kernel_rewards.stats = stats
    return kernel_rewards


def _judge_sandbox_errors(scorer: Scorer, problem: KernelProblem, items, scores):
    """Re-score each sandbox_error alone (one completion may have failed its group's execution);
    for one still failing, one control run decides (``metrics.kernel_outcome``)."""
    out = list(scores)
    failed = [k for k, s in enumerate(out) if s.verdict == "sandbox_error"]
    for k in failed:
        i, code = items[k]
        out[k] = scorer.score(problem, code, f"completion-{i}")
    still = [k for k in failed if out[k].verdict == "sandbox_error"]
    if still:
        control = scorer.score(problem, reference_candidate(problem), "control")
        verdict = "SANDBOX_ERROR" if control.verdict == "sandbox_error" else control.verdict
        for k in still:
            out[k].flags.append(f"{CONTROL_FLAG}{verdict}")
            out[k].reward = kernel_reward(out[k])  # the tiers Scorer._finish uses
    return out
