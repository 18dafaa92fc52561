"""The probe harness under a deterministic clock (ProbeSettings.clock; sandbox/clock.py): every
run is valgrind's count, so the same program gives the same number in every round and the
null-run subtraction is exact; a problem where a count does not apply (OpenMP) falls back to
its own clock with the flag, never silently. valgrind must be installed (scripts/setup.sh)."""
from __future__ import annotations

from pathlib import Path

import pytest

from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
from perfalign.measure.harness import ProbeSession, ProbeSettings
from perfalign.sandbox import Sandbox
from perfalign.sandbox import clock as clk


@pytest.fixture(scope="module")
def sb():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()
    with Sandbox(backend="bwrap", workers=1, calibrate=False) as s:
        yield s


POLYBENCH = Path(__file__).resolve().parents[3] / "shared" / "external" / "polybench"


@pytest.fixture(scope="module")
def gemm():
    if not POLYBENCH.is_dir():
        pytest.skip(f"no PolyBench/C checkout at {POLYBENCH}")
    return PolyBenchCheckout(POLYBENCH).problem("gemm", "reduced", "serial")


def test_a_count_is_the_same_every_round(sb, gemm):
    settings = ProbeSettings(repeats=2, max_repeats=2, clock="instructions")
    session = ProbeSession(sb, gemm, settings)
    scores = session.score({"a": gemm.reference, "slow": gemm.slow})
    a, slow = scores["a"], scores["slow"]
    assert a.verdict == slow.verdict == "OK", (a, slow)
    assert a.clock == "instructions" and session.info["measure_clock"] == "instructions"
    assert isinstance(a.runtime_s, float) and a.runtime_s > 1e4  # a count per call, not seconds
    # the same program in every round: the same count, up to what the fresh secret inputs of each
    # round move (the driver generates them and prints their fingerprints and its own in-process
    # times; PolyBench gemm, embedded: 3.2e-5 of the null run's 1.46e7 instructions, 1.4e-5 of the
    # reference's 1.02e8), against CPU times that moved by 30-70% in the same minute here
    for label in ("__null__", "__reference__", "a", "slow"):
        counts = [r[label] for r in session.info["round_clocks"]]
        assert max(counts) / min(counts) - 1 < 1e-4, (label, counts)
    assert a.rel_se < 1e-5 and "unmeasurable" not in a.flags and "imprecise_timing" not in a.flags
    # the known-slow oracle (the baseline's work done twice) is ~2x slower in instructions too
    assert 1.6 < slow.runtime_s / slow.baseline_s < 2.4, slow


def test_openmp_falls_back_to_its_own_clock_with_the_flag(sb):
    from perfalign.grpo.tasks import dgemm_task

    problem = dgemm_task("reduced", threads=1).problem  # compiled with -fopenmp
    settings = ProbeSettings(repeats=2, max_repeats=2, target_s=0.02, max_run_s=0.5, max_rel_se=10.0,
                             clock="instructions")
    session = ProbeSession(sb, problem, settings)
    score = session.score({"ref": problem.reference})["ref"]
    assert score.verdict == "OK", score
    assert score.clock == "cpu" and "clock_fallback:openmp" in score.flags, score
    assert session.info["clock_fallback"] == "openmp" and session.info["measure_clock"] == "cpu"


def test_an_unknown_clock_is_refused():
    with pytest.raises(ValueError, match="clock must be one of"):
        ProbeSettings(clock="wall")


def test_only_the_timed_runs_are_counted(sb, gemm):
    # mode V is never timed: under a count it would only run 10-100x slower (ParEval gemm's
    # validate() at its 1024^3 TEST_SIZE did not finish in 10 minutes under cycles); its answers
    # are checked natively, the timed runs' answers under the count
    for clock in ("instructions", "cycles"):
        session = ProbeSession(sb, gemm, ProbeSettings(clock=clock))
        assert session.job(gemm.reference, "V", 1, 1, 1.0).clock == "cpu"
        assert session.job(gemm.reference, "T", 1, 1, 1.0).clock == clock
    assert ProbeSession(sb, gemm, ProbeSettings()).job(gemm.reference, "T", 1, 1, 1.0).clock == "cpu"
