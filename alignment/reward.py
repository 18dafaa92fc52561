"""The RLPF reward r(p, d) of Eq. 4, computed for whole batches, and the adapter that lets TRL's
PPOTrainer (trl 1.12, ``trl.experimental.ppo``) use it.

* contest problem (tests + the dataset's median runtime in the code's language): run the
  code in the sandbox on the problem's tests -> -1 if incorrect, median / runtime - 1 if correct;
* otherwise (synthetic problems): the reward model r_theta(p, d).

Execution of a batch goes through ``Sandbox.run_many`` (parallel workers) and identical
programs are run once (a policy often repeats itself), so the trainer does not stall.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn

from .data import ContestProblem
from .equations import INCORRECT_REWARD, performance_reward
from .prompts import extract_code
from .scoring import reward_scores

log = logging.getLogger("perfalign.alignment.reward")


@dataclass(frozen=True)
class PromptInfo:
    """Which problem a prompt asks about, in which language, from which dataset."""

    prompt: str
    problem_id: str
    language: str
    source: str  # "contest" | "synthetic"


@dataclass
class RewardDetail:
    reward: float
    kind: str            # "execution", "reward_model", "no_code", "sandbox_error", "correct_no_baseline"
    verdict: str | None = None
    runtime_s: float | None = None


class PerformanceReward:
    """Eq. 4 for batches of (prompt info, response text)."""

    def __init__(self, problems: dict[str, ContestProblem], reward_model=None, tokenizer=None, sandbox=None,
                 workers: int = 2, repeats: int = 1, max_reward: float | None = None, rm_batch_size: int = 8,
                 max_length: int | None = None, cache: bool = True):
        self.problems = problems
        self.reward_model, self.tokenizer = reward_model, tokenizer
        self._sandbox = sandbox
        self.workers, self.repeats, self.max_reward = workers, repeats, max_reward
        self.rm_batch_size, self.max_length = rm_batch_size, max_length
        self._cache: dict[tuple[str, str, str], tuple[str, float | None]] | None = {} if cache else None
        self.counts: Counter = Counter()

    @property
    def sandbox(self):
        if self._sandbox is None:
            from sandbox import Sandbox

            self._sandbox = Sandbox(backend="auto", workers=self.workers)
        return self._sandbox

    def executes(self, info: PromptInfo) -> bool:
        """p in D_c: a contest problem with tests (whether the code's language has a median is
        known only once the code is read)."""
        p = self.problems.get(info.problem_id)
        return info.source == "contest" and p is not None and bool(p.inputs)

    def __call__(self, infos: list[PromptInfo], responses: list[str]) -> list[RewardDetail]:
        details: list[RewardDetail | None] = [None] * len(infos)
        to_run: dict[tuple[str, str, str], list[int]] = {}
        to_score: list[int] = []
        for i, (info, text) in enumerate(zip(infos, responses)):
            if not self.executes(info):
                to_score.append(i)
                continue
            code, lang = extract_code(text)
            if code is None:
                details[i] = RewardDetail(INCORRECT_REWARD, "no_code")
                continue
            to_run.setdefault((info.problem_id, lang or info.language, code), []).append(i)
        results = self._execute(list(to_run))
        for key, idxs in to_run.items():
            verdict, runtime = results[key]
            med = self.problems[key[0]].median_runtime_s.get(key[1])
            for i in idxs:
                if verdict == "SANDBOX_ERROR":  # infrastructure, not the policy: neutral
                    details[i] = RewardDetail(0.0, "sandbox_error", verdict)
                elif verdict == "OK" and med is None:  # correct, but no baseline in this language:
                    details[i] = RewardDetail(0.0, "correct_no_baseline", verdict, runtime)
                    if self.reward_model is not None:  # "otherwise" branch of Eq. 4
                        to_score.append(i)
                else:
                    r = performance_reward(has_tests=True, correct=verdict == "OK", runtime_s=runtime,
                                           median_runtime_s=med)
                    details[i] = RewardDetail(r, "execution", verdict, runtime)
        if to_score:
            if self.reward_model is None:
                raise ValueError("Eq. 4 needs the reward model for prompts without tests (synthetic problems)")
            scores = reward_scores(self.reward_model, self.tokenizer, [infos[i].prompt for i in to_score],
                                   [responses[i] for i in to_score], self.rm_batch_size, self.max_length)
            for i, s in zip(to_score, scores.tolist()):
                prev = details[i]
                details[i] = RewardDetail(float(s), "reward_model", prev.verdict if prev else None,
                                          prev.runtime_s if prev else None)
        out = []
        for d in details:
            if self.max_reward is not None:
                d.reward = min(d.reward, self.max_reward)
            self.counts[d.kind] += 1
            out.append(d)
        return out

    def _execute(self, keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], tuple[str, float | None]]:
        from sandbox import Job, Limits, TestCase

        done = {k: self._cache[k] for k in keys if self._cache is not None and k in self._cache}
        todo = [k for k in keys if k not in done]
        for attempt in range(2):  # one retry of infrastructure faults
            jobs = []
            for pid, lang, code in todo:
                p = self.problems[pid]
                jobs.append(Job(code, lang, [TestCase(i, o) for i, o in zip(p.inputs, p.outputs)],
                                Limits(time_s=p.time_limit_s, memory_mb=p.memory_limit_mb), repeats=self.repeats,
                                stop_on_failure=True))
            retry = []
            for j, res in self.sandbox.run_many(jobs, workers=self.workers) if jobs else ():
                key = todo[j]
                if res.verdict.value == "SANDBOX_ERROR" and attempt == 0:
                    retry.append(key)
                    continue
                done[key] = (res.verdict.value, res.mean_cpu_time_s)
                self.counts["sandbox_runs"] += 1
                if self._cache is not None and res.verdict.value != "SANDBOX_ERROR":
                    self._cache[key] = done[key]
            todo = retry
            if not todo:
                break
        return done


class _RewardBackbone(nn.Module):
    """Stands where get_reward expects the LM backbone: reads the token ids, computes Eq. 4 for
    each sequence and hands the rewards on as a (B, L, 1) "hidden state"."""

    def __init__(self, adapter: "RewardAdapter"):
        super().__init__()
        self._adapter = [adapter]  # a list: not registered as a submodule (no cycle)

    def forward(self, input_ids=None, attention_mask=None, **_):
        rewards = self._adapter[0].rewards_for(input_ids, attention_mask)
        hidden = rewards.to(input_ids.device)[:, None, None].expand(input_ids.shape[0], input_ids.shape[1], 1)
        return SimpleNamespace(hidden_states=(hidden,))


class RewardAdapter(nn.Module):
    """A "reward model" for trl.experimental.ppo.PPOTrainer backed by ``PerformanceReward``.

    PPOTrainer scores with ``get_reward``: ``getattr(model, model.base_model_prefix)(input_ids=...,
    attention_mask=...)``, then ``model.score(hidden_states[-1])``, read at the last non-pad token.
    Every position carries the sequence's reward, so whichever position is read gives it. The
    prompt is found by exact token-prefix match against the training / eval prompts.
    """

    base_model_prefix = "backbone"

    def __init__(self, reward: PerformanceReward, tokenizer, prompts: dict[tuple[int, ...], PromptInfo]):
        super().__init__()
        self.reward, self.tokenizer = reward, tokenizer
        self.prompts = prompts
        self._lengths = sorted({len(k) for k in prompts}, reverse=True)
        self.backbone = _RewardBackbone(self)
        self.score = nn.Identity()
        self.history: list[RewardDetail] = []

    def split(self, ids: list[int]) -> tuple[PromptInfo, list[int]]:
        for n in self._lengths:
            info = self.prompts.get(tuple(ids[:n]))
            if info is not None:
                return info, ids[n:]
        raise KeyError("a PPO sequence does not start with any known prompt")

    @torch.no_grad()
    def rewards_for(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        infos, texts = [], []
        for row, mask in zip(input_ids.tolist(), attention_mask.bool().tolist()):
            info, response = self.split([t for t, m in zip(row, mask) if m])
            infos.append(info)
            texts.append(self.tokenizer.decode(response, skip_special_tokens=True))
        details = self.reward(infos, texts)
        self.history.extend(details)
        return torch.tensor([d.reward for d in details], dtype=torch.float32)
