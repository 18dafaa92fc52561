"""One policy for numbers that become labels or rewards: speedups and rewards are never taken
at face value.

A measured speedup is the ratio of two CPU times; a program that dodges measurement (or a
near-zero denominator) makes it explode. Every speedup and every performance reward in
perfalign passes through :func:`check_speedup`: NaN/inf are rejected, values are capped, and a
value above ``remeasure_above`` is flagged so the caller re-measures it once (and keeps the
flag in its record when it is still that high).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

# Defaults documented in docs/evaluation.md: a contest solution that is really
# 100x faster than the median exists, one that is 1000x faster is almost always a measurement
# artifact; 10x is where a second measurement is cheap insurance.
DEFAULT_CAP = 100.0
DEFAULT_REMEASURE_ABOVE = 10.0
# Below this CPU time a ratio is dominated by timer resolution and process start-up.
MIN_DENOMINATOR_S = 1e-4
# Repeats of one program on one input are judged as a set: one more than this many times faster
# than another was not measured doing the same work (state kept between runs: the host's page
# cache, a file outside the wiped directories): the set is flagged "fast_repeat" and its time is
# the slowest repeat's, never a median that hides the cold first run. The one place to change it.
FAST_REPEAT_RATIO = 3.0


@dataclass(frozen=True)
class SpeedupPolicy:
    cap: float = DEFAULT_CAP                        # a speedup above this is capped to it (flag capped)
    remeasure_above: float = DEFAULT_REMEASURE_ABOVE  # a speedup above this is measured once more (flag implausible)
    min_denominator_s: float = MIN_DENOMINATOR_S    # a denominator below this (s) is raised to it (timer resolution)

    def __post_init__(self) -> None:
        if not (self.cap > 0 and math.isfinite(self.cap)):
            raise ValueError(f"speedup cap must be a positive finite number, got {self.cap!r}")
        if not self.remeasure_above > 0:
            raise ValueError(f"remeasure_above must be positive, got {self.remeasure_above!r}")


@dataclass
class CheckedSpeedup:
    """A speedup after the policy: ``value`` is None when the input was not a number."""

    value: float | None
    raw: float | None
    flags: list[str] = field(default_factory=list)

    @property
    def needs_remeasure(self) -> bool:
        return "implausible" in self.flags

    @property
    def valid(self) -> bool:
        return self.value is not None


def speedup_ratio(baseline_s: float | None, candidate_s: float | None,
                  policy: SpeedupPolicy = SpeedupPolicy()) -> CheckedSpeedup:
    """baseline / candidate CPU time, through :func:`check_speedup` (denominator floored)."""
    if baseline_s is None or candidate_s is None:
        return CheckedSpeedup(None, None, ["missing_time"])
    b, c = float(baseline_s), float(candidate_s)
    if not (math.isfinite(b) and math.isfinite(c)) or b < 0 or c < 0:
        return CheckedSpeedup(None, None, ["invalid_time"])
    flags = []
    if c < policy.min_denominator_s:
        flags.append("below_timer_resolution")
        c = policy.min_denominator_s
    checked = check_speedup(b / c, policy)
    checked.flags[:0] = flags
    return checked


def check_speedup(value: float | None, policy: SpeedupPolicy = SpeedupPolicy()) -> CheckedSpeedup:
    """Reject NaN/inf/negative, cap at ``policy.cap``, flag values above ``remeasure_above``."""
    if value is None:
        return CheckedSpeedup(None, None, ["missing"])
    try:
        v = float(value)
    except (TypeError, ValueError):
        return CheckedSpeedup(None, None, ["not_a_number"])
    if not math.isfinite(v) or v < 0:
        return CheckedSpeedup(None, v if not math.isnan(v) else None,
                              ["not_finite" if not math.isfinite(v) else "negative"])
    flags = []
    if v > policy.remeasure_above:
        flags.append("implausible")
    if v > policy.cap:
        flags.append("capped")
        v = policy.cap
    return CheckedSpeedup(v, float(value), flags)


def repeats_as_set(times, ratio: float = FAST_REPEAT_RATIO) -> tuple[float | None, list[str]]:
    """(the time of a set of repeats, flags): their median, or, when one repeat is more than
    ``ratio`` times faster than another (and the gap is above the timer's resolution), the slowest
    repeat's time with the flag ``fast_repeat``."""
    vals = [float(t) for t in times if t is not None]
    if not vals:
        return None, []
    lo, hi = min(vals), max(vals)
    if hi > lo * ratio and hi - lo >= MIN_DENOMINATOR_S:
        return hi, ["fast_repeat"]
    return statistics.median(vals), []
