"""Metrics as KernelBench and Makora report them, and the kernel reward.

- correct %: candidates that pass every check and carry no ``hack:`` flag, over all problems;
- fast_p (p = 0, 1, 2): correct and speedup over eager > p (fast_0 = correct %);
- % faster than torch.compile: correct and speedup over the Inductor baseline > 1;
- geometric-mean speedup over eager and over torch.compile, over the correct candidates.
Speedups are already checked by ``common.plausibility`` (capped, NaN/inf rejected).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from perfalign.common.outcomes import Outcome, flag_outcome, judge, sandbox_outcome
from perfalign.common.plausibility import check_speedup

FAST_P = (0.0, 1.0, 2.0)


@dataclass(frozen=True)
class KernelRewardTiers:
    """Rewards of failures, worst first; every one is below a correct kernel's (>= 0)."""

    format_error: float = -1.0     # no ModelNew, not Python
    load_error: float = -0.8       # import, C++ compile or construction failed
    runtime_error: float = -0.6    # raised, crashed, killed its harness
    timeout: float = -0.6
    incorrect: float = -0.4        # wrong values, shapes, dtypes, modified inputs, aliasing
    flagged: float = -0.2          # correct, but a hack was detected (reference op, tampering...)
    against: str = "eager"         # the speedup a correct kernel earns: over "eager" or "compile"


# the failure tiers by verdict; any other verdict (a penalized sandbox or baseline error, one not
# known here) is a runtime error
_TIERS = ("format_error", "load_error", "runtime_error", "timeout", "incorrect")
# on a score whose whole job got SANDBOX_ERROR: the verdict of the control run (the problem's own
# Model as the candidate, same scorer, right after), set by the reward function
CONTROL_FLAG = "control:"


def kernel_outcome(score) -> Outcome | None:
    """common.outcomes for a kernel score (None for a correct, measured one). Withheld only:
    - ``baseline_error`` flagged ``reference_failed`` by the scorer: the scale calibration failed,
      or the trusted driver reported the reference failing alone, before any candidate code
      existed. Any other baseline_error is penalized;
    - a correct kernel (no ``hack:`` or penalized measurement flag) flagged ``unmeasurable``: the
      reference timed alone, before any candidate code, was itself too noisy (score.judge_timing;
      the candidate's own noise is ``erratic_timing``, scored at a pessimistic bound);
    - ``sandbox_error`` whose control run (flag ``control:SANDBOX_ERROR``) failed the same way."""
    v = score.verdict
    if v == "correct":
        if score.hack_flags:
            return judge("hack_flagged", ", ".join(score.hack_flags))
        bad = flag_outcome(score.flags)
        if bad is not None:
            return bad
        return judge("unmeasurable_problem", score.message) if "unmeasurable" in score.flags else None
    if v == "baseline_error":
        if "reference_failed" in score.flags:  # set by the scorer where the trusted side saw it
            return judge("reference_failed", score.message)
        return judge("candidate_broke_its_harness", "a baseline error the scorer did not establish as the "
                     "reference's own: " + (score.message or "")[:500])
    if v == "sandbox_error":
        control = next((f[len(CONTROL_FLAG):] for f in score.flags if f.startswith(CONTROL_FLAG)), None)
        return sandbox_outcome("SANDBOX_ERROR", control_verdict=control)
    return judge(v)


def kernel_reward(score, tiers: KernelRewardTiers = KernelRewardTiers()) -> float | None:
    """Correctness-gated speedup: a correct, unflagged kernel earns its (plausibility-checked)
    speedup; failures earn their tier; None only when ``kernel_outcome`` withholds (the
    reference's own failure, an established sandbox fault), which a trainer skips."""
    outcome = kernel_outcome(score)
    if outcome is not None and outcome.withheld:
        return None
    if score.verdict != "correct":
        return getattr(tiers, score.verdict if score.verdict in _TIERS else "runtime_error")
    if outcome is not None:  # correct, but a hack or a penalized measurement flag
        return tiers.flagged
    value = score.speedup_compile if tiers.against == "compile" else score.speedup_eager
    checked = check_speedup(value)
    return checked.value if checked.value is not None else 0.0


def geomean(values) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


@dataclass
class Metrics:
    n: int
    correct_pct: float
    fast_p: dict = field(default_factory=dict)
    faster_than_compile_pct: float | None = None
    geomean_speedup_eager: float | None = None
    geomean_speedup_compile: float | None = None
    flagged: int = 0
    verdicts: dict = field(default_factory=dict)
    mean_reward: float | None = None


def summarize(scores) -> Metrics:
    n = len(scores)
    if n == 0:
        return Metrics(0, 0.0)
    ok = [s for s in scores if s.accepted]
    pct = lambda k: round(100.0 * k / n, 2)  # noqa: E731
    verdicts = dict(Counter(s.verdict for s in scores))
    with_compile = [s for s in ok if s.speedup_compile is not None]
    rewards = [s.reward for s in scores if s.reward is not None]
    return Metrics(
        n=n,
        correct_pct=pct(len(ok)),
        fast_p={f"fast_{p:g}": pct(sum(1 for s in ok if (s.speedup_eager or 0.0) > p)) for p in FAST_P},
        faster_than_compile_pct=pct(sum(1 for s in with_compile if s.speedup_compile > 1.0)) if with_compile else None,
        geomean_speedup_eager=geomean(s.speedup_eager for s in ok),
        geomean_speedup_compile=geomean(s.speedup_compile for s in with_compile),
        flagged=sum(1 for s in scores if s.correct and s.hack_flags),
        verdicts=verdicts,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
    )
