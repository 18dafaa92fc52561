"""The statistics of the one measurement protocol: a candidate is timed beside its reference in
interleaved rounds (a fresh random order each round), each time estimated by a median, and the
speedup gated on its own precision. The probe harness (``measure/harness.py``) and the kernel
scorer (``kernelenv/score.py``, and inside the sandbox ``kernelenv/guest/``, shipped with this
module by ``sandbox.shipping``: one implementation) use these functions.

Plain Python (``math``, ``statistics``): nothing here imports perfalign, so the sandboxed guest can
run it as is. Each equation is one function:

- ``spread``: the runs' standard deviation (robust from 5 runs on);
- ``rel_se_of_cost``: relative standard error of median(runs) - median(null runs);
- ``combined_rel_se``: of a ratio of independent estimates;
- ``ratio_rel_se``: the error of a ratio of medians that the rounds' own ratios show;
- ``medians_rel_se``: the error of the medians' speedup: combined, at least ``ratio_rel_se``;
- ``round_ratio_speedup``: the second estimate, the median of the per-round ratios;
- ``shift``: |log| of the gap between the two estimates (the machine's speed moved);
- ``needs_more_rounds`` / ``futile_above``: when to add rounds;
- ``rounds_affordable``: the round cap priced in the rounds' own measured time;
- ``optimistic_bound``: the highest speedup the noise leaves plausible;
- ``precision``: the decision ok / imprecise / unmeasurable under a ``NoiseGate``;
- ``paired_speedup``: the paired estimate, from the per-round ratios alone (immune to drift);
- ``hybrid``: the medians' estimate where the gate takes it, else the paired one;
- ``rounds_estimate``: ``hybrid`` on rounds of two costs each (no null run);
- ``more_rounds``: the stopping rule on the estimate a score would report.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

MEDIAN_EFFICIENCY = 1.2533  # the standard error of a median of normal runs is sqrt(pi/2) times the mean's
MAD_TO_SD = 1.4826          # median absolute deviation -> standard deviation (normal runs)
# Student's t (97.5%) over 1.96, by degrees of freedom: a mean of few rounds is less sure than normal
T_WIDEN = {1: 6.48, 2: 2.19, 3: 1.62, 4: 1.42, 5: 1.31, 6: 1.25, 7: 1.20, 8: 1.18, 9: 1.15, 10: 1.14}


@dataclass(frozen=True)
class NoiseGate:
    """How precise a speedup must be. Rounds are added while any estimate's relative standard
    error (or the gap between the speedup's two estimates) is above ``target_rel_se``; a speedup
    whose combined error is above sqrt(2) times that is imprecise (flagged), above ``max_rel_se``
    (or whose two estimates are further apart than that) unmeasurable. The values were chosen on
    the probe harness's sweeps (README: |error|/SE median 0.62, p90 1.88; 113 of 114 reported
    honest scores within 10% of the truth)."""

    target_rel_se: float = 0.03  # rounds are added while a relative standard error is above this
    max_rel_se: float = 0.06     # a speedup less precise than this (or its estimates further apart) is unmeasurable
    slower_than: float = 0.5     # ... unless even its optimistic bound is below this: slower whatever the noise


def spread(xs: list[float]) -> float:
    """Standard deviation of the runs: from the median absolute deviation once there are 5 (one
    run disturbed by other load must not make a time look unmeasurable: the estimate is a
    median), the plain one below that (a MAD of 3 runs can be 0 by chance)."""
    if len(xs) < 2:
        return 0.0
    if len(xs) < 5:
        return statistics.stdev(xs)
    med = statistics.median(xs)
    return MAD_TO_SD * statistics.median(abs(x - med) for x in xs)


def rel_se_of_cost(runs: list[float], null: list[float] | None = None) -> float | None:
    """Relative standard error of median(runs) - median(null) (just median(runs) without null
    runs); None with fewer than 2 runs on a side, inf where the cost is not positive."""
    null = null or []
    if len(runs) < 2 or (null and len(null) < 2):
        return None
    cost = statistics.median(runs) - (statistics.median(null) if null else 0.0)
    var = spread(runs) ** 2 / len(runs) + (spread(null) ** 2 / len(null) if null else 0.0)
    return MEDIAN_EFFICIENCY * math.sqrt(var) / cost if cost > 0 else math.inf


def combined_rel_se(*errors: float | None) -> float | None:
    """Relative error of a ratio of independent estimates; None if any is unknown."""
    if any(e is None for e in errors):
        return None
    return math.sqrt(sum(e * e for e in errors))


def ratio_rel_se(pairs: list[tuple[float, float]]) -> float | None:
    """The relative error of median(baseline) / median(candidate) that the rounds' own ratios
    show: the spread of the per-round log ratios, as a median's error over the rounds, widened by
    Student's t. Each side's spread from its median absolute deviation can be small by chance in 5
    to 10 rounds (a busy host's heavy-tailed costs), and read alone it then claims a precision the
    ratios do not have; None with fewer than 3 rounds whose costs are both positive."""
    logs = [math.log(b / c) for b, c in pairs if b > 0 and c > 0]
    if len(logs) < 3:
        return None
    return MEDIAN_EFFICIENCY * statistics.stdev(logs) / math.sqrt(len(logs)) * T_WIDEN.get(len(logs) - 1, 1.1)


def medians_rel_se(pairs: list[tuple[float, float]]) -> float | None:
    """The relative error of the medians' speedup from rounds of (baseline, candidate) costs: the
    two medians' combined error, at least what the rounds' ratios show (``ratio_rel_se``)."""
    rel_se = combined_rel_se(rel_se_of_cost([b for b, _ in pairs]), rel_se_of_cost([c for _, c in pairs]))
    spread = ratio_rel_se(pairs)
    return rel_se if rel_se is None or spread is None else max(rel_se, spread)


def round_ratio_speedup(pairs: list[tuple[float, float]]) -> float | None:
    """The median over rounds of baseline cost / candidate cost, each pair from one round (the
    two runs shared the machine's state); None without a round whose costs are both positive."""
    ratios = [b / c for b, c in pairs if b > 0 and c > 0]
    return statistics.median(ratios) if ratios else None


def shift(pairs: list[tuple[float, float]], baseline: float, candidate: float) -> float:
    """|log| of the ratio of a speedup's two estimates: baseline / candidate (the medians' costs)
    and the median of the per-round ratios. They part when the machine's speed shifts within a
    session: medians of runs can come from different regimes while per-round ratios do not.
    0 with fewer than 3 rounds or where a cost is at or below zero (the speedup floor handles
    those)."""
    if len(pairs) < 3 or baseline <= 0 or candidate <= 0 or any(b <= 0 or c <= 0 for b, c in pairs):
        return 0.0
    return abs(math.log((baseline / candidate) / statistics.median(b / c for b, c in pairs)))


def needs_more_rounds(rel_ses: list[float | None], gap: float, gate: NoiseGate,
                      futile: float = math.inf) -> bool:
    """More rounds while an estimate is less precise than the target (unless it is already
    futile) or the speedup's two estimates are further apart than that."""
    errs = [e for e in rel_ses if e is not None]
    return any(gate.target_rel_se < e <= futile for e in errs) or gap > gate.target_rel_se


def futile_above(gate: NoiseGate, rounds: int, max_rounds: int) -> float:
    """A relative error above this cannot reach ``max_rel_se`` in the rounds left, even with
    thrice the luck of the square-root law; judged from 5 rounds on, where the spread is robust."""
    return 3 * gate.max_rel_se * math.sqrt(max_rounds / rounds) if rounds >= 5 else math.inf


def rounds_affordable(rounds: int, spent_s: float, max_repeats: int, budget_s: float, cap: int) -> bool:
    """Whether two more rounds may run while an estimate is imprecise: up to ``max_repeats``
    whatever they cost; beyond, up to ``cap``, while two more rounds like the ones run so far
    (``spent_s``: their measured time, every program's) keep the total within ``budget_s``. Short
    programs get rounds until precise, costly ones keep the round cap, and a program that makes
    its rounds costly pays for it in rounds."""
    if rounds < max_repeats:
        return True
    return rounds + 2 <= cap and rounds > 0 and spent_s * (rounds + 2) / rounds <= budget_s


@dataclass(frozen=True)
class Precision:
    decision: str   # "ok", "imprecise" (reported, flagged) or "unmeasurable" (not reported)
    reason: str = ""


def optimistic_bound(speedup: float, rel_se: float | None, gap: float, z: float = 3.0) -> float:
    """The highest speedup the noise leaves plausible: speedup x exp(z x error + gap)."""
    return speedup * math.exp(z * min(rel_se if rel_se is not None else math.inf, 10.0) + gap)


def precision(rel_se: float | None, gap: float, gate: NoiseGate, rounds: int,
              speedup: float | None = None) -> Precision:
    """The gate: unmeasurable when the combined relative error or the gap between the two
    estimates is above ``max_rel_se``; imprecise when the error is above sqrt(2) x target. A
    speedup whose ``optimistic_bound`` is below ``gate.slower_than`` is never unmeasurable (only
    imprecise): no noise of this size could make it as fast as its reference, so withholding it
    would only spare a slow program its penalty."""
    why = ""
    if rel_se is not None and rel_se > gate.max_rel_se:
        why = (f"after {rounds} rounds its time is still uncertain by {100 * rel_se:.0f}% "
               f"(limit {100 * gate.max_rel_se:.0f}%): the noise swamps the work")
    elif gap > gate.max_rel_se:
        why = (f"its medians of runs and its per-round ratios disagree by {100 * (math.exp(gap) - 1):.0f}% after "
               f"{rounds} rounds (limit {100 * gate.max_rel_se:.0f}%): "
               "the machine's speed shifted during the measurement")
    if why:
        clear = speedup is not None and 0 < optimistic_bound(speedup, rel_se, gap) < gate.slower_than
        return Precision("imprecise") if clear else Precision("unmeasurable", why)
    if rel_se is not None and rel_se > math.sqrt(2) * gate.target_rel_se:
        return Precision("imprecise")
    return Precision("ok")


@dataclass(frozen=True)
class Estimate:
    speedup: float | None
    rel_se: float | None
    gap: float = 0.0            # |log| between the medians' and the per-round estimates (medians only)
    rule: str = "medians"       # "medians" or "paired"


def paired_speedup(pairs: list[tuple[float, float]]) -> Estimate:
    """The speedup from the rounds alone: each round's baseline / candidate cost shares the
    machine's state, so a drift of the whole machine (on a busy host ~20% within a session)
    cancels, where medians of runs count it as noise. Its error is the standard error of the mean
    per-round log ratio, widened by Student's t for the rounds. The estimate is the inverse of the
    mean per-round cost ratio (candidate / baseline): for an honest program it is the ratios'
    geometric mean within noise; an erratic candidate's geometric mean exceeds what its mean cost
    earns (by half its log variance), the mean cost ratio does not.
    None with fewer than 3 rounds whose costs are both positive."""
    good = [(b, c) for b, c in pairs if b > 0 and c > 0]
    if len(good) < 3 or len(good) < len(pairs):
        return Estimate(None, None, 0.0, "paired")
    logs = [math.log(b / c) for b, c in good]
    se = statistics.stdev(logs) / math.sqrt(len(logs)) * T_WIDEN.get(len(logs) - 1, 1.1)
    return Estimate(1 / statistics.fmean(c / b for b, c in good), se, 0.0, "paired")


def hybrid(medians: Estimate, pairs: list[tuple[float, float]], gate: NoiseGate) -> Estimate:
    """The estimate a score reports: the medians' where they pass the gate (error and gap within
    ``max_rel_se``), else the paired one where it does, else the medians' (withheld or penalized
    by ``precision`` as before). On the recorded sweeps this withheld 90 of 436 honest scores
    instead of 141, and every busy-host one was reported (docs/evaluation.md)."""
    def passes(e: Estimate) -> bool:
        return e.speedup is not None and e.rel_se is not None and e.rel_se <= gate.max_rel_se \
            and e.gap <= gate.max_rel_se
    if passes(medians):
        return medians
    paired = paired_speedup(pairs)
    return paired if passes(paired) else medians


def rounds_estimate(pairs: list[tuple[float, float]], gate: NoiseGate = NoiseGate()) -> Estimate:
    """The estimate a score reports from (baseline, candidate) costs per round, with no null run
    (the contest protocol, the kernel scorer): the medians' (``medians_rel_se``, their gap to the
    per-round ratios) where the gate takes it, else the paired one (``hybrid``)."""
    if not pairs:
        return Estimate(None, None)
    base, cand = [b for b, _ in pairs], [c for _, c in pairs]
    b, c = statistics.median(base), statistics.median(cand)
    return hybrid(Estimate(b / c if b > 0 and c > 0 else None, medians_rel_se(pairs), shift(pairs, b, c)),
                  pairs, gate)


def more_rounds(est: Estimate, gate: NoiseGate, futile: float = math.inf) -> bool:
    """Rounds are added while the estimate a score would report is less precise than the target
    (unless futile) or its medians and per-round ratios are further apart than that."""
    return needs_more_rounds([est.rel_se], est.gap, gate, futile)
