"""Withheld or penalized: the one policy for every reward path (RLPF Eq. 4, GRPO's tiers, the
kernel reward).

A failed candidate is penalized unless the failure has a cause on ``WITHHELD_CAUSES``: an
allowlist of faults the candidate provably could not have caused, each with the evidence that
establishes it. Anything else, a cause this module has never heard of included, is penalized
(a denylist of penalized causes would let every new failure mode launder its penalty).

The candidate's own SANDBOX_ERROR is not on the list: it may have flooded output, crashed the
runner or exhausted a limit. It is withheld only when a fixed, trusted control program, run in
the same sandbox right after it, fails the same way (the sandbox is broken for everyone).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PENALIZE, WITHHOLD = "penalize", "withhold"

# cause -> how a reward path establishes it, outside the candidate's reach
WITHHELD_CAUSES = {
    "reference_failed": "the reference/baseline program failed in a run of its own that no candidate code ran before "
                        "in the same execution (a session's preparation, the probe harness's null/reference runs, the "
                        "kernel scorer's scale calibration and eager test)",
    "no_baseline": "the dataset holds no usable baseline runtime for this problem in this language (a property of the "
                   "data, known before the candidate is read)",
    "unmeasurable_problem": "the reference alone cannot be timed here: its work per call is below what this host "
                            "resolves, or its own runs, before any candidate code existed, were too noisy (decided "
                            "from the reference alone)",
    "infrastructure": "a fixed, trusted control program, run in the same sandbox right after the candidate's "
                      "SANDBOX_ERROR, failed with SANDBOX_ERROR too",
    "unsupported_task_language": "the host has no toolchain for the language the prompt asked for, and the candidate "
                                 "wrote in that language",
}
# Measurement flags that are the candidate's doing: a correct program carrying one is penalized.
# "fast_repeat": one repeat far faster than another (common.plausibility.repeats_as_set): state
# kept between runs, not the same work measured twice. "count_contradicts_cpu": faster than its
# baseline only under a deterministic clock, slower in the CPU time measured beside the count
# (sandbox.clock.count_contradicts_cpu).
PENALIZED_FLAGS = ("fast_repeat", "count_contradicts_cpu")
_FLAG_REASONS = {"fast_repeat": "its repeats were not the same work measured twice",
                 "count_contradicts_cpu": "faster only under the count: the CPU time beside it says slower"}


@dataclass(frozen=True)
class Outcome:
    """What a reward path does with one failed (or unmeasurable) candidate."""

    action: str   # PENALIZE | WITHHOLD
    cause: str    # a key of WITHHELD_CAUSES, or what the candidate did
    reason: str = ""

    @property
    def withheld(self) -> bool:
        return self.action == WITHHOLD


def judge(cause: str, reason: str = "") -> Outcome:
    """Withhold for a cause on the allowlist, penalize anything else."""
    if cause in WITHHELD_CAUSES:
        return Outcome(WITHHOLD, cause, reason or WITHHELD_CAUSES[cause])
    return Outcome(PENALIZE, cause, reason or f"{cause}: a failure the candidate could have caused")


def sandbox_outcome(verdict: str, *, control_verdict: str | None = None,
                    asked_language_unsupported: bool = False) -> Outcome:
    """The outcome of a candidate's failing sandbox verdict (anything but OK, as a string).

    ``control_verdict``: the verdict of the fixed control program run in the same sandbox right
    after the candidate's SANDBOX_ERROR (None: none was run, and nothing is established).
    ``asked_language_unsupported``: UNSUPPORTED_LANGUAGE for the language the prompt demanded."""
    verdict = str(verdict)
    if verdict == "SANDBOX_ERROR":
        if control_verdict is not None and str(control_verdict) == "SANDBOX_ERROR":
            return judge("infrastructure")
        return judge("candidate_sandbox_error",
                     "the candidate's own run failed the sandbox" + (
                         f" and the control program beside it did not ({control_verdict})" if control_verdict
                         else " (no control program established an infrastructure fault)"))
    if verdict == "UNSUPPORTED_LANGUAGE" and asked_language_unsupported:
        return judge("unsupported_task_language")
    return judge(verdict.lower())


def flag_outcome(flags) -> Outcome | None:
    """The penalty of a correct program whose measurement carries a penalized flag, else None."""
    bad = [f for f in flags if f in PENALIZED_FLAGS]
    return judge(bad[0], f"{bad[0]}: {_FLAG_REASONS[bad[0]]}") if bad else None


@dataclass
class WithheldTally:
    """Withheld rewards over all rewards of one training step (or any batch)."""

    total: int = 0
    withheld: int = 0
    causes: Counter = field(default_factory=Counter)

    def add(self, outcome: Outcome | None) -> None:
        """One reward: ``outcome`` None for a plain success."""
        self.total += 1
        if outcome is not None and outcome.withheld:
            self.withheld += 1
            self.causes[outcome.cause] += 1

    @property
    def share(self) -> float | None:
        return withheld_share(self.withheld, self.total)

    def to_dict(self) -> dict:
        return {"withheld": self.withheld, "total": self.total, "withheld_share": self.share,
                "withheld_causes": dict(self.causes)}


def withheld_share(withheld: int, total: int) -> float | None:
    """The share of a step's rewards that were withheld (None for an empty step)."""
    return withheld / total if total else None
