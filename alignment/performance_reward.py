"""The RLPF reward r(p, d) of Eq. 4, computed for whole batches, and the adapter that lets TRL's
PPOTrainer (trl 1.12, ``trl.experimental.ppo``) use it.

* contest problem (tests + the dataset's median runtime in the code's language): run the
  code in the sandbox on the problem's tests -> -1 if incorrect, median / runtime - 1 if correct;
* otherwise (synthetic problems): the reward model r_theta(p, d).

Execution of a batch goes through ``Sandbox.run_many`` (parallel workers, the sandbox's one
retry policy for SANDBOX_ERROR) and identical programs are run once (a policy often repeats
itself), so the trainer does not stall. How a reward is measured: ``PerformanceReward``.

Withheld or penalized (common.outcomes, the one policy): every failure the program could have
caused earns -1, its own SANDBOX_ERROR included, unless a fixed control program run in the same
sandbox right after fails too (``CONTROL_PROGRAMS``); withheld are only a missing or unusable
baseline in the dataset, an infrastructure fault so established, and a language the prompt asked
for that this host cannot run. A withheld sample stands in the PPO batch at the mean of the
batch's other rewards (no signal either way: a fixed 0.0 would be a prize in a batch of -1s).
"""
from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn

from perfalign.common.equations import INCORRECT_REWARD, performance_reward
from perfalign.common.languages import Language
from perfalign.common.outcomes import Outcome, flag_outcome, judge, sandbox_outcome
from perfalign.common.plausibility import CheckedSpeedup, SpeedupPolicy, speedup_ratio
from perfalign.common.prompts import extract_code
from perfalign.sandbox.calibration import host_scale
from perfalign.sandbox.clock import (
    CONTRADICTED,
    DEFAULT_CLOCK,
    DETERMINISTIC,
    ClockMismatch,
    check_clock,
    count_contradicts_cpu,
    fallback_reason,
    native_cpu_s,
)

from .data import RewardProblem
from .scoring import reward_scores

log = logging.getLogger("perfalign.alignment.performance_reward")


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
    kind: str            # "execution", "reward_model", "no_code", "sandbox_error", "correct_no_baseline",
                         # "invalid_measurement", "unsupported_language"
    verdict: str | None = None
    runtime_s: float | None = None
    speedup: float | None = None        # median (on this host) / runtime, after common.plausibility
    flags: tuple[str, ...] = ()         # plausibility flags ("implausible", "capped", "remeasured", ...)
    withheld: bool = False              # no reward (common.outcomes); ``reward`` is then a placeholder
    cause: str = ""                     # why penalized or withheld (common.outcomes), "" for a success

    @classmethod
    def of(cls, outcome: Outcome, kind: str, verdict: str | None = None, runtime_s: float | None = None,
           flags: tuple[str, ...] = ()) -> "RewardDetail":
        """A failure's detail: -1 (Eq. 4's incorrect) when penalized, a 0.0 placeholder when withheld."""
        return cls(0.0 if outcome.withheld else INCORRECT_REWARD, kind, verdict, runtime_s, flags=flags,
                   withheld=outcome.withheld, cause=outcome.cause)


# The control run behind a withheld SANDBOX_ERROR: a fixed, trusted program per language, run in
# the same sandbox right after the candidate's fault; only when it fails too is the sandbox at fault.
CONTROL_PROGRAMS = {
    Language.CPP: '#include <cstdio>\nint main() { std::puts("ok"); return 0; }\n',
    Language.PYTHON3: 'print("ok")\n',
    Language.PYTHON2: 'print("ok")\n',
    Language.JAVA: 'public class Main { public static void main(String[] a) { System.out.println("ok"); } }\n',
}


@dataclass
class _Measured:
    verdict: str
    runtime_s: float | None
    calibration: dict
    remeasured: bool = False
    flags: tuple[str, ...] = ()  # the sandbox's "fast_repeat": its runtime is the slowest repeat's
    control: str | None = None   # SANDBOX_ERROR only: the verdict of the control program run after it
    clock: str = DEFAULT_CLOCK   # what measured ``runtime_s`` (a count under instructions / cycles)
    native_cpu_s: float | None = None  # under a count: the same build's native CPU time beside it...
    native_noise: float = 0.0          # ...and its relative noise (sandbox.clock.native_cpu_s)

# on a counted reward whose dataset holds no native CPU time beside its counts (a folder from
# before the column): the count could not be checked against the CPU time
UNCHECKED = "count_unchecked"


def label_clock(language: str, clock: str) -> str:
    """The clock a label of ``language`` carries when measured with ``clock``: the sandbox falls
    back to cpu where a count does not apply (Java's JIT, the Python 2 root; sandbox.clock)."""
    return DEFAULT_CLOCK if clock not in DETERMINISTIC or fallback_reason(language, "default", (), {}) else clock


class PerformanceReward:
    """Eq. 4 for batches of (prompt info, response text), measured like the labels it is compared
    to: the dataset's repeats per test (median CPU time per test, mean over tests), the median
    converted to this host by the calibration figures (sandbox.calibration.host_scale), and the
    speedup through common.plausibility (capped; NaN/inf rejected; above ``remeasure_above`` the
    program is run once more and the lower speedup kept, flagged if still implausible).

    ``clock`` (sandbox.clock): under "instructions" / "cycles" the candidate's runtime is its
    count (mean over tests) and the baseline the dataset's median count in that language: no host
    calibration (a count does not depend on the machine) and no re-measurement (it would repeat
    the same count). The dataset's labels must carry the same clock (``ClockMismatch``, checked
    when the reward is made): instructions are never compared with seconds. A count that says
    faster is checked against the CPU time measured beside it (the candidate's native runs
    against the dataset's, converted to this host): slower beyond their noise, it is flagged
    ``count_contradicts_cpu`` and penalized (common.outcomes); a dataset without that column is
    not checked (flag ``count_unchecked``, logged once)."""

    def __init__(self, problems: dict[str, RewardProblem], reward_model=None, tokenizer=None, sandbox=None,
                 workers: int = 2, repeats: int | None = None, policy: SpeedupPolicy = SpeedupPolicy(),
                 rm_batch_size: int = 8, max_length: int | None = None, cache: bool = True,
                 clock: str = DEFAULT_CLOCK):
        self.problems = problems
        self.clock = check_clock(clock)
        for p in problems.values():
            for lang, have in p.label_clocks.items():
                if have != label_clock(lang, clock):
                    raise ClockMismatch(
                        f"the dataset's {lang} labels of {p.problem_id} were measured with the {have} clock, "
                        f"the reward measures with {label_clock(lang, clock)}: set rlpf.clock (perf.clock) to the "
                        "dataset's")
        self.reward_model, self.tokenizer = reward_model, tokenizer
        self._sandbox = sandbox
        self.workers, self.repeats, self.policy = workers, repeats, policy
        self.rm_batch_size, self.max_length = rm_batch_size, max_length
        self._cache: dict[tuple[str, str, str], _Measured] | None = {} if cache else None
        self.counts: Counter = Counter()
        self._unchecked: set[str] = set()  # problems already logged as count_unchecked

    @property
    def sandbox(self):
        if self._sandbox is None:
            from perfalign.sandbox import Sandbox, SandboxSettings

            self._sandbox = Sandbox.from_settings(SandboxSettings(), workers=self.workers)
        return self._sandbox

    def executes(self, info: PromptInfo) -> bool:
        """p in D_c: a contest problem with tests (whether the code's language has a median is
        known only once the code is read)."""
        p = self.problems.get(info.problem_id)
        return info.source == "contest" and p is not None and bool(p.inputs)

    def _speedup(self, key: tuple[str, str, str], m: _Measured) -> tuple[float | None, CheckedSpeedup]:
        """(the median on this host, the checked speedup) of a correct program."""
        p = self.problems[key[0]]
        have = p.label_clocks.get(key[1], DEFAULT_CLOCK)
        if key[1] in p.median_runtime_s and m.clock != have:  # e.g. a backend without valgrind fell back
            raise ClockMismatch(f"{key[0]}: a {key[1]} program was measured with the {m.clock} clock, its baseline "
                                f"with {have}: instructions are never compared with seconds")
        counted = m.clock in DETERMINISTIC  # a count's baseline is a count, the same on every host
        med = (p.median_count if counted else p.median_runtime_s).get(key[1])
        if med is None:
            return None, CheckedSpeedup(None, None, ["no_baseline"])
        if not counted:
            med *= host_scale(p.hosts, p.calibration_cpu_s, m.calibration)
        return med, speedup_ratio(med, m.runtime_s, self.policy)

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
        results = self._measure(list(to_run))
        for key, idxs in to_run.items():
            m = results[key]
            for i in idxs:
                details[i] = self._detail(key, m, infos[i].language)
                if details[i].kind == "correct_no_baseline" and self.reward_model is not None:
                    to_score.append(i)  # the "otherwise" branch of Eq. 4
        if to_score:
            if self.reward_model is None:
                raise ValueError("Eq. 4 needs the reward model for prompts without tests (synthetic problems)")
            scores = reward_scores(self.reward_model, self.tokenizer, [infos[i].prompt for i in to_score],
                                   [responses[i] for i in to_score], self.rm_batch_size, self.max_length)
            for i, s in zip(to_score, scores.tolist()):
                prev = details[i]
                details[i] = RewardDetail(float(s), "reward_model", prev.verdict if prev else None,
                                          prev.runtime_s if prev else None)
        for d in details:
            self.counts[d.kind] += 1
            self.counts.update(f"flag:{f}" for f in d.flags)
            if d.withheld:
                self.counts["withheld"] += 1
                self.counts[f"withheld:{d.cause}"] += 1
        return details

    def _detail(self, key: tuple[str, str, str], m: _Measured, asked_language: str | None = None) -> RewardDetail:
        """Eq. 4 of one measured program; failures through common.outcomes (withheld or penalized)."""
        if m.verdict == "SANDBOX_ERROR":
            return RewardDetail.of(sandbox_outcome(m.verdict, control_verdict=m.control), "sandbox_error", m.verdict)
        if m.verdict == "UNSUPPORTED_LANGUAGE":  # withheld only when written in the language asked for
            asked = Language.lookup(asked_language) is Language.lookup(key[1]) is not None
            return RewardDetail.of(sandbox_outcome(m.verdict, asked_language_unsupported=asked),
                                   "unsupported_language", m.verdict)
        if m.verdict != "OK":
            return RewardDetail(performance_reward(has_tests=True, correct=False), "execution", m.verdict, m.runtime_s,
                                cause=judge(m.verdict.lower()).cause)
        med, checked = self._speedup(key, m)
        flags = tuple(checked.flags) + (("remeasured",) if m.remeasured else ()) + m.flags \
            + self._cpu_check(key, m, checked.value)
        bad = flag_outcome(flags)
        if bad is not None:  # e.g. fast_repeat: state kept between repeats
            return RewardDetail.of(bad, "execution", m.verdict, m.runtime_s, flags)
        if med is None or not (math.isfinite(med) and med > 0):  # correct, no usable baseline in this language
            return RewardDetail.of(judge("no_baseline"), "correct_no_baseline", m.verdict, m.runtime_s, flags)
        if checked.value is None:  # the program's own time is not a number: never a reward, a penalty
            return RewardDetail.of(judge("invalid_measurement"), "invalid_measurement", m.verdict, m.runtime_s, flags)
        r = performance_reward(has_tests=True, correct=True, runtime_s=m.runtime_s, median_runtime_s=med,
                               policy=self.policy)
        return RewardDetail(r, "execution", m.verdict, m.runtime_s, checked.value, flags)

    def _cpu_check(self, key: tuple[str, str, str], m: _Measured, speedup: float | None) -> tuple[str, ...]:
        """Under a count that says faster: (CONTRADICTED,) where the CPU time beside it says slower
        beyond the noise of both sides (or its run has none), (UNCHECKED,) where the dataset has no
        CPU time to compare."""
        if m.clock not in DETERMINISTIC or speedup is None or speedup <= 1.0:
            return ()
        p = self.problems[key[0]]
        base = p.native_cpu.get(key[1])
        if base is not None and not m.native_cpu_s:  # its own run lacks the CPU time: no credit unchecked
            return (CONTRADICTED,)
        if base is None:
            if key[0] not in self._unchecked:
                self._unchecked.add(key[0])
                log.warning("%s: no native CPU time beside the dataset's %s counts (a folder from before the "
                            "column): its counted rewards are not checked against the CPU time", key[0], key[1])
            return (UNCHECKED,)
        base_cpu = base[0] * host_scale(p.hosts, p.calibration_cpu_s, m.calibration)
        return (CONTRADICTED,) if count_contradicts_cpu(speedup, base_cpu / m.native_cpu_s,
                                                        base[1] + m.native_noise) else ()

    def _measure(self, keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], _Measured]:
        """Run each program once (cached); re-measure once those whose speedup is implausible and
        keep the slower measurement (a program cannot buy a reward with one lucky run)."""
        done = {k: self._cache[k] for k in keys if self._cache is not None and k in self._cache}
        fresh = self._execute([k for k in keys if k not in done])
        again = [k for k, m in fresh.items() if m.verdict == "OK" and self._speedup(k, m)[1].needs_remeasure
                 and m.clock not in DETERMINISTIC]  # a count measured again is the same count
        for k, m in self._execute(again).items():
            first = fresh[k]
            # the slower run, or the second if it failed (its SANDBOX_ERROR judged like the first's)
            slower = first if m.verdict == "OK" and (m.runtime_s or 0) <= (first.runtime_s or 0) else m
            fresh[k] = _Measured(slower.verdict, slower.runtime_s, slower.calibration, remeasured=True,
                                 flags=tuple(sorted(set(first.flags) | set(m.flags))), clock=slower.clock)
        self._control(fresh)
        for k, m in fresh.items():
            if self._cache is not None and m.verdict != "SANDBOX_ERROR":
                self._cache[k] = m
        return {**done, **fresh}

    def _control(self, measured: dict[tuple[str, str, str], _Measured]) -> None:
        """After a SANDBOX_ERROR (the sandbox's retries spent), the control program of that
        language once in the same sandbox; its verdict decides (common.outcomes.sandbox_outcome)."""
        from perfalign.sandbox import Job, TestCase

        failed = {Language.lookup(k[1]) for k, m in measured.items() if m.verdict == "SANDBOX_ERROR"}
        langs = sorted(failed & CONTROL_PROGRAMS.keys(), key=str)
        if not langs:
            return
        jobs = [Job(CONTROL_PROGRAMS[lang], lang, [TestCase("", "ok\n")]) for lang in langs]
        # retries=0: one faulty run of the control already shows the sandbox at fault
        verdicts = {langs[j]: str(res.verdict.value) for j, res in self.sandbox.run_many(jobs, workers=1, retries=0)}
        self.counts["control_runs"] += len(jobs)
        for k, m in measured.items():
            if m.verdict == "SANDBOX_ERROR":
                m.control = verdicts.get(Language.lookup(k[1]))

    def _execute(self, keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], _Measured]:
        """One batched run_many; infrastructure faults (SANDBOX_ERROR) retried by the sandbox (its retries)."""
        if not keys:
            return {}
        from perfalign.sandbox import Job, Limits, TestCase

        jobs = []
        for pid, lang, code in keys:
            p = self.problems[pid]
            jobs.append(Job(code, lang, [TestCase(i, o) for i, o in zip(p.inputs, p.outputs)],
                            Limits(time_s=p.time_limit_s, memory_mb=p.memory_limit_mb),
                            repeats=self.repeats or p.repeats, stop_on_failure=True, clock=self.clock))
        out = {}
        for j, res in self.sandbox.run_many(jobs, workers=self.workers):
            clock = getattr(res, "clock", DEFAULT_CLOCK)
            native, noise = native_cpu_s(res.tests) if clock in DETERMINISTIC else (None, 0.0)
            out[keys[j]] = _Measured(res.verdict.value, _count(res) if clock in DETERMINISTIC else res.mean_cpu_time_s,
                                     dict(getattr(res, "calibration", None) or {}),
                                     flags=tuple(f for f in getattr(res, "flags", ()) if f == "fast_repeat"),
                                     clock=clock, native_cpu_s=native, native_noise=noise)
            self.counts["sandbox_runs"] += 1
        return out


def _count(res) -> float | None:
    """The mean over tests of a run's deterministic count (the label's unit: perfdata count_label)."""
    vals = [t.cycles if res.clock == "cycles" else t.instructions for t in res.tests]
    vals = [float(v) for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


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
    prompt is found by exact token-prefix match against the training / eval prompts. The trained
    reward model (synthetic prompts) is a submodule, so it follows the adapter to the policy's device.
    """

    base_model_prefix = "backbone"

    def __init__(self, reward: PerformanceReward, tokenizer, prompts: dict[tuple[int, ...], PromptInfo]):
        super().__init__()
        self.reward, self.tokenizer = reward, tokenizer
        self.prompts = prompts
        self._lengths = sorted({len(k) for k in prompts}, reverse=True)
        self.backbone = _RewardBackbone(self)
        self.score = nn.Identity()
        # Registered as a submodule so the trainer's ``reward_model.to(device)`` moves r_theta with
        # the adapter (an attribute of PerformanceReward alone would stay on the CPU).
        rm = getattr(reward, "reward_model", None)
        self.reward_model = rm if isinstance(rm, nn.Module) else None
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
        return torch.tensor(batch_rewards(details), dtype=torch.float32)


def batch_rewards(details: list[RewardDetail]) -> list[float]:
    """The rewards PPO sees: a withheld sample (TRL's PPO cannot drop one) gets the mean of the
    batch's other rewards, so it moves the policy neither way; 0.0 when all are withheld."""
    withheld = [bool(getattr(d, "withheld", False)) for d in details]
    given = [d.reward for d, w in zip(details, withheld) if not w]
    stand_in = sum(given) / len(given) if given else 0.0
    return [stand_in if w else d.reward for d, w in zip(details, withheld)]
