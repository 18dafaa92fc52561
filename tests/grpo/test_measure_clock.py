"""GRPO's measurement under a deterministic clock (MeasureSettings.clock): a correct rollout's
reward is its speedup over the naive reference in valgrind's count (GFLOPS from a count would be
meaningless: docs/grpo.md), the same for the same program every time; a task compiled with
-fopenmp (DGEMM) falls back to CPU time and GFLOPS, flagged. valgrind must be installed."""
from __future__ import annotations

from pathlib import Path

import pytest

from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
from perfalign.grpo.measure import MeasureSettings, Rollout, evaluate_rollout
from perfalign.grpo.static import TECHNIQUES
from perfalign.grpo.tasks import GrpoTask, dgemm_task
from perfalign.sandbox import clock as clk

SETTINGS = MeasureSettings(validate_time_s=5.0, repeats=2, max_repeats=2, target_s=0.05, peak_seconds=0.1,
                           peak_n=128, clock="instructions")
POLYBENCH = Path(__file__).resolve().parents[3] / "shared" / "external" / "polybench"


@pytest.fixture(scope="module")
def gemm_task():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()
    if not POLYBENCH.is_dir():
        pytest.skip(f"no PolyBench/C checkout at {POLYBENCH}")
    spec = PolyBenchCheckout(POLYBENCH).problem("gemm", "reduced", "serial")
    return GrpoTask("gemm", spec, 1e6, "gemm", spec.prompt)


def run(task, code):
    return evaluate_rollout(Rollout("t", task.name, code, tuple(TECHNIQUES), mode="code"), task, SETTINGS)


def test_the_reward_is_the_counted_speedup_and_repeats_itself(gemm_task):
    first, again = (run(gemm_task, gemm_task.problem.reference) for _ in range(2))
    for rec in (first, again):
        assert rec["tier"] == "ok" and "clock:instructions" in rec["flags"], rec["message"]
        assert rec["gflops"] is None and rec["naive_gflops"] is None and rec["peak_fraction"] is None
        assert rec["reward"] == rec["speedup_vs_naive"] and rec["reward"] > 0
    # fresh secret inputs each time: equal up to what they move (below 1e-5 of the work)
    assert abs(first["reward"] / again["reward"] - 1) < 1e-5, (first["reward"], again["reward"])


def test_an_openmp_task_falls_back_to_gflops_with_the_flag():
    task = dgemm_task("reduced", threads=1)  # compiled with -fopenmp
    rec = evaluate_rollout(Rollout("t", task.name, task.problem.reference, tuple(TECHNIQUES), mode="code"), task,
                           SETTINGS)
    assert rec["tier"] == "ok" and "clock_fallback:openmp" in rec["flags"], rec["message"]
    assert rec["gflops"] and rec["reward"] == rec["gflops"]


def test_probe_settings_carry_the_clock():
    assert SETTINGS.clock == "instructions" and MeasureSettings().clock == "cpu"  # the probe protocol itself
