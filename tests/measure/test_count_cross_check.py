"""The probe harness under a count checks each speedup against the CPU time the sandbox measured
beside it (the same builds run natively in the same jobs): a count that calls a candidate faster
while that CPU time says slower beyond its own error is not credited (flag count_contradicts_cpu,
penalized by common.outcomes). On a busy host the native runs are noisy, so the check must never
flag an honest program there: judged with the native CPU times of a recorded busy sweep (load ~4
on 2 cores, docs/measurements/harness-2026-11-28/busy2_beside_suite.json) as the runs beside
exact counts, an honest copy of the reference and an honest faster program beside an attack that
is faster only under the count, each on the same rounds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfalign.common.outcomes import PENALIZED_FLAGS
from perfalign.sandbox.clock import CONTRADICTED

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "measurements" / "harness-2026-11-28" / "busy2_beside_suite.json"
PAREVAL = ROOT.parent / "shared" / "external" / "pareval"
NULL_COUNT, WORK_COUNT = 2e6, 2e7  # a run's counts: the driver's (null run; payoff ceiling 5x), the work


def _run(count: float, native_s: float):
    from perfalign.common.languages import Language
    from perfalign.sandbox import RunResult, Verdict
    from perfalign.sandbox.types import CompileInfo, TestResult

    test = TestResult(Verdict.OK, cpu_time_s=native_s * 40, wall_time_s=native_s * 40, instructions=int(count),
                      native_cpu_times_s=[native_s])
    return RunResult(Verdict.OK, "test", Language.CPP, True, CompileInfo(True), [test], flags=["clock:instructions"])


def _session():
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings
    from perfalign.measure.transcript import Transcript

    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("02_dense_la_gemm"), ProbeSettings(clock="instructions"))
    s.measurable, s.calls = True, 100
    s.transcript = lambda res: Transcript(end=0)
    return s


def _busy_sessions() -> list[list[dict]]:
    """Each recorded session's first 3 rounds of CPU clocks (a counted session stops at 3: its
    counts are exact), as the native CPU times beside the counts."""
    return [r["round_clocks"][:3] for r in json.loads(RECORD.read_text()) if r.get("round_clocks")]


def _score(session, rounds: list[dict], count_ratio: float, native_of):
    """The score of a candidate whose count is the reference's work x ``count_ratio``, its native
    CPU time per round ``native_of(round)``."""
    runs = [{"__null__": _run(NULL_COUNT, r["__null__"]),
             "__reference__": _run(NULL_COUNT + WORK_COUNT * (1 + 1e-6 * i), r["__reference__"]),
             "cand": _run(NULL_COUNT + WORK_COUNT * count_ratio * (1 - 1e-6 * i), native_of(r))}
            for i, r in enumerate(rounds)]
    return session._judge("cand", runs)


@pytest.mark.skipif(not PAREVAL.is_dir(), reason=f"no ParEval checkout at {PAREVAL}")
def test_honest_programs_on_a_busy_host_are_never_contradicted():
    s = _session()
    for rounds in _busy_sessions():
        same = _score(s, rounds, 1.0, lambda r: r["reference"])  # a copy of the reference: its own runs
        faster = _score(s, rounds, 0.5, lambda r: r["__null__"] + (r["reference"] - r["__null__"]) / 2)
        for score in (same, faster):
            assert score.verdict == "OK" and CONTRADICTED not in score.flags, score
        assert same.speedup == pytest.approx(1.0, abs=1e-4) and faster.speedup == pytest.approx(2.0, rel=1e-4)


@pytest.mark.skipif(not PAREVAL.is_dir(), reason=f"no ParEval checkout at {PAREVAL}")
def test_faster_only_under_the_count_is_penalized_beside_its_honest_twin():
    """The attack counts 1.5x cheaper and runs 3x slower natively; its twin counts the same and
    runs 1.5x faster. In every recorded busy session the attack is flagged and scores 0, the
    twin 1.5. (Natively only 1.5x slower, the attack is caught in 5 of the 8 sessions: the
    machine's noise at that load hides the rest; a count's prices are the first line.)"""
    s = _session()
    for rounds in _busy_sessions():
        def work(r):
            return r["reference"] - r["__null__"]

        attack = _score(s, rounds, 1 / 1.5, lambda r: r["__null__"] + 3 * work(r))
        twin = _score(s, rounds, 1 / 1.5, lambda r: r["__null__"] + work(r) / 1.5)
        assert CONTRADICTED not in twin.flags and twin.speedup == pytest.approx(1.5, rel=1e-4)
        assert CONTRADICTED in attack.flags and attack.speedup == 0.0 and "not credited" in attack.message
        assert CONTRADICTED in PENALIZED_FLAGS


@pytest.mark.skipif(not PAREVAL.is_dir(), reason=f"no ParEval checkout at {PAREVAL}")
def test_erratic_native_runs_do_not_hide_a_contradiction():
    """The attack detects valgrind and, natively only, runs erratically (5x the reference's work in
    two rounds of three, 0.9x in the other): were the noise its own runs' spread, that spread would
    excuse it. The noise is the trusted programs' (reference against null), so it is flagged in
    every recorded busy session, and its honest twin in none."""
    s = _session()
    for rounds in _busy_sessions():
        def work(r):
            return r["reference"] - r["__null__"]

        erratic = iter([5, 0.9, 5])
        attack = _score(s, rounds, 1 / 1.5, lambda r: r["__null__"] + next(erratic) * work(r))
        twin = _score(s, rounds, 1 / 1.5, lambda r: r["__null__"] + work(r) / 1.5)
        assert CONTRADICTED in attack.flags and attack.speedup == 0.0, attack
        assert CONTRADICTED not in twin.flags
