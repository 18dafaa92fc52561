"""One DGEMM program per reward tier, measured for real (sandbox, trusted driver TU, validation
at two sizes, timed calls), plus a forbidden technique, a library call caught statically and one
caught at link, and a PolyBench kernel from the checkout (skipped when absent)."""
from __future__ import annotations

from pathlib import Path

import pytest

from perfalign.grpo.measure import MeasureSettings, Rollout, evaluate_rollout
from perfalign.grpo.static import TECHNIQUES
from perfalign.grpo.tasks import dgemm_task

SETTINGS = MeasureSettings(validate_time_s=2.0, repeats=2, max_repeats=2, target_s=0.05, peak_seconds=0.1,
                           peak_n=256)
ALL = tuple(TECHNIQUES)
SIG = "void dgemm(int n, double alpha, const double* A, const double* B, double beta, double* C)"
NAIVE = SIG + """ {
  for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) {
    double s = 0; for (int k = 0; k < n; ++k) s += A[i*n+k] * B[k*n+j];
    C[i*n+j] = alpha * s + beta * C[i*n+j]; } }"""
POLYBENCH = Path(__file__).resolve().parents[3] / "shared" / "external" / "polybench"


@pytest.fixture(scope="module")
def task():
    return dgemm_task("reduced", threads=1)


def run(task, completion, mode="code", permitted=ALL):
    return evaluate_rollout(Rollout("t", "dgemm", completion, permitted, mode=mode), task, SETTINGS)


def test_ok_tier_reports_gflops_peak_and_floor(task):
    rec = run(task, "order=ikj tile=0 simd=1 omp=0 unroll=1", mode="spec")
    assert rec["tier"] == "ok", rec["message"]
    assert rec["reward"] == rec["gflops"] > 0
    # the naive triple loop is the floor, numpy/OpenBLAS on the same worker the ceiling
    assert rec["naive_gflops"] > 0 and rec["peak_gflops"] > rec["gflops"]
    assert 0 < rec["peak_fraction"] < 1
    assert rec["niche"] == "simd"


@pytest.mark.timing
def test_naive_program_is_near_the_floor(task):
    rec = run(task, NAIVE)
    assert rec["tier"] == "ok"
    assert 0.5 < rec["gflops"] / rec["naive_gflops"] < 2.0


@pytest.mark.parametrize("tier,reward,code", [
    ("compile", -40, SIG + " { this is not C }"),
    ("timeout", -30, SIG + " { volatile double x = 0; for (;;) x += 1; }"),
    ("runtime", -20, SIG + " { __builtin_trap(); }"),
    # correct everywhere but one entry
    ("verification", -10, SIG.replace("dgemm(", "dgemm_ok(") + NAIVE[len(SIG):] + "\n" + SIG
     + " { dgemm_ok(n, alpha, A, B, beta, C); C[0] += 1.0; }"),
    ("format", -100, "order=ikj tile=7 simd=0 omp=0 unroll=1"),
    ("library", -100, "#include <cblas.h>\n" + SIG
     + " { cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, alpha, A, n, B, n, beta, C, n); }"),
])
def test_each_tier(task, tier, reward, code):
    rec = run(task, code, mode="spec" if tier == "format" else "code")
    assert rec["tier"] == tier, (rec["verdict"], rec["message"])
    assert rec["reward"] == reward
    assert rec["gflops"] is None


def test_library_call_caught_at_link(task):
    # a LAPACK symbol the source check does not know: the trusted link has no library for it
    code = 'extern "C" void xerbla_(const char*, int*);\n' + SIG + ' { int e = 1; if (n < 0) xerbla_("X", &e); ' \
           + NAIVE[len(SIG) + 2:]
    rec = run(task, code)
    assert rec["tier"] == "library" and rec["reward"] == -100, rec["message"]
    assert "xerbla_" in rec["message"]


def test_forbidden_technique_is_a_format_violation(task):
    rec = run(task, "order=ikj tile=32 simd=0 omp=1 unroll=1", mode="spec", permitted=("blocking",))
    assert rec["tier"] == "format" and rec["reward"] == -100
    assert "openmp" in rec["message"] and "forbidden" in rec["message"]
    # the same program where the stage permits both techniques is measured
    assert run(task, "order=ikj tile=32 simd=0 omp=1 unroll=1", mode="spec",
               permitted=("blocking", "openmp"))["tier"] == "ok"
    # free code: an OpenMP pragma in a stage without OpenMP
    free = SIG.replace("dgemm(", "dgemm_ok(") + NAIVE[len(SIG):] + "\n" + SIG + \
        " {\n#pragma omp parallel for\nfor (int r = 0; r < 1; ++r) dgemm_ok(n, alpha, A, B, beta, C); }"
    assert run(task, free, permitted=())["tier"] == "format"


@pytest.mark.skipif(not (POLYBENCH / "utilities" / "polybench.h").is_file(),
                    reason=f"no PolyBench/C checkout at {POLYBENCH}")
def test_polybench_syrk_reference_is_measured():
    from perfalign.grpo.tasks import polybench_task

    t = polybench_task(POLYBENCH, "syrk", "reduced", threads=1)
    ref = t.problem.reference
    rec = evaluate_rollout(Rollout("p", "syrk", ref, ALL, mode="code"), t, SETTINGS)
    assert rec["tier"] == "ok", rec["message"]
    assert rec["flops"] == t.flops > 0 and rec["gflops"] > 0
