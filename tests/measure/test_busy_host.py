"""Honest scores on a busy machine: the whole host drifts (~20% within a session) while inside a
round the reference and the candidate agree. The medians of runs count the drift as noise and
withhold the score; the paired estimate (timing_stats.hybrid) reports it. Judged on recorded
rounds (docs/measurements/harness-2026-11-28, 29_reduce_sum_of_min_of_pairs at load ~5) and on
an erratic candidate beside its honest twin, which must gain nothing."""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from perfalign.measure.timing_stats import (
    Estimate,
    NoiseGate,
    combined_rel_se,
    hybrid,
    paired_speedup,
    precision,
    rel_se_of_cost,
    shift,
)

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "measurements" / "harness-2026-11-28" / "harness_busy2_load5.json"
PAREVAL = ROOT.parent / "shared" / "external" / "pareval"
GATE = NoiseGate()


def _medians(rounds: list[dict], label: str) -> tuple[Estimate, list[tuple[float, float]]]:
    """The harness's medians estimate (each series minus the median null run) and the rounds' pairs."""
    null = [r["__null__"] for r in rounds]
    ref, cand = [r["__reference__"] for r in rounds], [r[label] for r in rounds]
    b, c = statistics.median(ref) - statistics.median(null), statistics.median(cand) - statistics.median(null)
    pairs = [(r["__reference__"] - r["__null__"], r[label] - r["__null__"]) for r in rounds]
    rel_se = combined_rel_se(rel_se_of_cost(cand, null), rel_se_of_cost(ref, null))
    return Estimate(b / c, rel_se, shift(pairs, b, c)), pairs


def _recorded() -> dict:
    return next(r for r in json.loads(RECORD.read_text()) if r["model"] == "serial")


def test_recorded_busy_rounds_are_reported_by_the_paired_estimate():
    row = _recorded()
    for label, truth in (("reference", 1.0), ("slow", row["slow_true"])):
        medians, pairs = _medians(row["round_clocks"], label)
        assert precision(medians.rel_se, medians.gap, GATE, len(pairs), medians.speedup).decision == "unmeasurable"
        est = hybrid(medians, pairs, GATE)
        assert est.rule == "paired" and est.rel_se <= GATE.max_rel_se
        assert abs(est.speedup / truth - 1) < 0.05


def _drifting(candidate_costs: list[float]) -> list[tuple[float, float]]:
    """Nine rounds on a machine whose speed wanders by 30% over the session (shared by both
    programs within a round): reference cost 1.0 x drift."""
    drift = [1.0, 1.22, 1.05, 1.18, 0.98, 1.25, 1.1, 0.95, 1.2]
    return [(d, d * c) for d, c in zip(drift, candidate_costs)]


def _judge(pairs: list[tuple[float, float]]) -> tuple[Estimate, str]:
    ref, cand = [b for b, _ in pairs], [c for _, c in pairs]
    b, c = statistics.median(ref), statistics.median(cand)
    medians = Estimate(b / c, combined_rel_se(rel_se_of_cost(ref), rel_se_of_cost(cand)), shift(pairs, b, c))
    est = hybrid(medians, pairs, GATE)
    return est, precision(est.rel_se, est.gap, GATE, len(pairs), est.speedup).decision


def test_an_honest_program_on_a_drifting_machine_is_reported():
    est, decision = _judge(_drifting([1.0 + 0.01 * (-1) ** i for i in range(9)]))
    assert decision != "unmeasurable" and est.rule == "paired" and abs(est.speedup - 1.0) < 0.02


def test_an_erratic_candidate_gains_nothing():
    """Bimodal on purpose (0.4x and 1.6x the reference's cost, alternating; mean cost 1.0): the
    rounds' ratios disagree, so no estimate passes the gate and the score is unmeasurable as
    before. Mildly erratic (0.9x / 1.1x) it passes, and scores no more than its honest twin at
    the same mean cost: the ratios' geometric mean (1.005) would pay for the spread, the mean
    cost ratio does not."""
    wild, decision = _judge(_drifting([0.4 if i % 2 else 1.6 for i in range(9)]))
    assert decision == "unmeasurable" and wild.rule == "medians"
    mild_pairs = _drifting([0.9 if i % 2 else 1.1 for i in range(8)] + [1.0])
    mild, decision = _judge(mild_pairs)
    honest, _ = _judge(_drifting([1.0] * 9))
    assert decision != "unmeasurable" and mild.rule == "paired"
    geo = math.exp(statistics.fmean(math.log(b / c) for b, c in mild_pairs))
    assert geo > 1.004 and mild.speedup <= honest.speedup + 1e-9


def test_the_paired_estimate_needs_three_good_rounds():
    assert paired_speedup([(1.0, 1.0), (1.0, 1.0)]).speedup is None
    assert paired_speedup([(1.0, 1.0), (1.0, -0.1), (1.0, 1.0)]).speedup is None  # a cost at or below its null run
    est = paired_speedup([(2.0, 1.0)] * 3)
    assert est.speedup == pytest.approx(2.0) and est.rel_se == 0.0


@pytest.mark.skipif(not PAREVAL.is_dir(), reason=f"no ParEval checkout at {PAREVAL}")
def test_the_harness_reports_the_recorded_busy_session():
    """The live path (ProbeSession._judge) on the recorded rounds: both honest controls reported,
    flagged paired_timing, within 5% of the truth."""
    from perfalign.common.languages import Language
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings
    from perfalign.measure.transcript import Transcript
    from perfalign.sandbox import RunResult, Verdict
    from perfalign.sandbox.types import CompileInfo, TestResult

    row = _recorded()
    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem(row["problem"]), ProbeSettings())
    s.measurable, s.calls = True, row["calls"]
    s.transcript = lambda res: Transcript(end=0)
    rounds = [{k: RunResult(Verdict.OK, "test", Language.CPP, True, CompileInfo(True),
                            [TestResult(Verdict.OK, cpu_time_s=c, wall_time_s=c)]) for k, c in r.items()}
              for r in row["round_clocks"]]
    for label, truth in (("reference", 1.0), ("slow", row["slow_true"])):
        score = s._judge(label, rounds)
        assert score.verdict == "OK" and "paired_timing" in score.flags, score
        assert abs(score.speedup / truth - 1) < 0.05
