"""Reward tiers of arXiv 2602.12049 (as given by a published review of the paper): -100 format or
library violation, -40 compile error, -30 timeout, -20 runtime error, -10 verification failure,
otherwise the measured GFLOPS. Configurable (``GrpoRewardTiers``); every rollout keeps its tier.

Mapping of the harness's verdicts onto the tiers is this package's design:
OVER_BUDGET (more threads or CPU than the worker's pinned cores) is a rule violation, so it
takes the format tier; MEMORY/OUTPUT limits are runtime errors; TRANSCRIPT_INVALID (the program
printed or stopped where the driver did not) and WRONG_ANSWER are verification failures; the
candidate's own SANDBOX_ERROR, and any verdict not named here, is a runtime error.

Withheld (tier ``infrastructure``, reward None: TRL ignores it) only for what common.outcomes
allows: the task's reference failing its own runs (``ProblemUnusable``), a problem too small to
time, or a SANDBOX_ERROR that the reference, run again in the same sandbox right after, shares.
"""
from __future__ import annotations

from dataclasses import dataclass

from perfalign.common.outcomes import Outcome, sandbox_outcome

WITHHELD_TIER = "infrastructure"  # no reward (common.outcomes: a fault the candidate provably did not cause)


@dataclass(frozen=True)
class GrpoRewardTiers:
    format: float = -100.0         # reward of bad format, a forbidden technique, over-budget CPU (arXiv 2602.12049)
    library: float = -100.0        # reward of an external library's use (header, symbol, link, dlopen, new process)
    compile: float = -40.0         # reward of a compile error
    timeout: float = -30.0         # reward of a time-limit overrun
    runtime: float = -20.0         # reward of a runtime error (memory and output limits too)
    verification: float = -10.0    # reward of a wrong answer or invalid transcript
    ok_reward: str = "gflops"      # a correct program's reward: "gflops", or "peak_fraction" (GFLOPS / peak * 100)


_VERDICT_TIER = {
    "COMPILE_ERROR": "compile",
    "TIME_LIMIT_EXCEEDED": "timeout",
    "RUNTIME_ERROR": "runtime", "MEMORY_LIMIT_EXCEEDED": "runtime", "OUTPUT_LIMIT_EXCEEDED": "runtime",
    "WRONG_ANSWER": "verification", "TRANSCRIPT_INVALID": "verification",
    "OVER_BUDGET": "format",
    "OK": "ok",
    "SANDBOX_ERROR": "runtime", "UNSUPPORTED_LANGUAGE": "runtime",  # the candidate's own run (see judge_verdict)
}


def tier_of_verdict(verdict: str) -> str:
    """The tier of a harness verdict (module docstring: the mapping and why)."""
    return _VERDICT_TIER.get(verdict, "runtime")


def judge_verdict(verdict: str, control_verdict: str | None = None) -> tuple[str, Outcome | None]:
    """(tier, outcome) of the candidate's harness verdict: ("ok", None) for OK; the withheld tier
    when common.outcomes withholds (a SANDBOX_ERROR the control run beside it shares); else the
    verdict's penalty tier."""
    if verdict == "OK":
        return "ok", None
    outcome = sandbox_outcome(verdict, control_verdict=control_verdict)
    return (WITHHELD_TIER if outcome.withheld else tier_of_verdict(verdict)), outcome


def tier_reward(tier: str, gflops: float | None, peak_gflops: float | None, tiers: GrpoRewardTiers) -> float | None:
    """Reward of one rollout (arXiv 2602.12049 tier table): the tier's fixed value, or for a
    correct program its GFLOPS (``ok_reward="gflops"``, the paper's reward) or its percentage of
    the machine's measured peak (``"peak_fraction"``: comparable across machines)."""
    if tier == "ok":
        if gflops is None:  # correct but not measurable here: no performance claim
            return None
        if tiers.ok_reward == "peak_fraction" and peak_gflops:
            return 100.0 * gflops / peak_gflops
        return float(gflops)
    if tier == "infrastructure":
        return None
    return float(getattr(tiers, tier))


def gflops(flops: float, seconds: float | None) -> float | None:
    """GFLOPS of one call: FLOPs (the harness's count) / seconds / 1e9 (None without a time)."""
    if seconds is None or seconds <= 0:
        return None
    return flops / seconds / 1e9
