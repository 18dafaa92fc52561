"""The kernel reward as a TRL reward function: ``f(prompts=, completions=, problem=..., **columns)``
returns one reward per completion (``kernels.kernel_reward``: correctness-gated speedup, tiered
failures, None where the fault is not the candidate's). Completions of the same problem are
scored together in one sandboxed execution (``Scorer.score_many``)."""
from __future__ import annotations

import re
from collections import defaultdict

from .problems import Problem
from .score import Scorer

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)


def extract_code(completion) -> str:
    """The last fenced Python block of a completion (chat or plain text), else the whole text."""
    if isinstance(completion, list):  # conversational: the last message's content
        completion = completion[-1].get("content", "") if completion else ""
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(completion or "")]
    py = [b for tag, b in blocks if tag in ("python", "py", "python3", "")]
    return (py or [b for _, b in blocks] or [completion or ""])[-1]


def make_reward_function(scorer: Scorer, problems: dict[str, Problem]):
    """A GRPOTrainer reward function; the dataset's ``problem`` column names a key of ``problems``."""

    def kernel_rewards(prompts=None, completions=None, problem=None, **_):
        rewards: list = [None] * len(completions)
        groups = defaultdict(list)
        for i, (name, completion) in enumerate(zip(problem, completions)):
            groups[name].append((i, extract_code(completion)))
        for name, items in groups.items():
            scores = scorer.score_many(problems[name], [(f"completion-{i}", code) for i, code in items])
            for (i, _), s in zip(items, scores):
                rewards[i] = s.reward
        return rewards

    kernel_rewards.__name__ = "kernel_reward"
    return kernel_rewards
