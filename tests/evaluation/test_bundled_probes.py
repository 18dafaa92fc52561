"""The bundled samples through the probe harness: fresh secret inputs every call, so a candidate
that keeps its results between calls (which the old single-driver harness, one input set timed
several times, scored as correct and fast) is a WRONG_ANSWER; the honest one is correct."""
from __future__ import annotations

import pytest

from perfalign.config.tables import preset
from perfalign.evaluation.tasks.registry import load_tasks
from perfalign.measure.harness import ProbeSettings, score_problem

GEMM = ("void kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double* C, const double* A, "
        "const double* B)")
LOOP = """
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            double s = 0;
            for (int k = 0; k < nk; k++) s += A[i * nk + k] * B[k * nj + j];
            C[i * nj + j] = beta * C[i * nj + j] + alpha * s;
        }
"""
CANDIDATES = {
    "honest": f"{GEMM} {{{LOOP}}}\n",
    "first_call_only": f"{GEMM} {{\n    static bool done = false;\n    if (done) return;\n    done = true;{LOOP}}}\n",
    "cache_across_calls": f"#include <vector>\n#include <algorithm>\n{GEMM} {{\n"
                          "    static std::vector<double> memo;\n"
                          "    if (!memo.empty()) { std::copy(memo.begin(), memo.end(), C); return; }\n"
                          f"{LOOP}    memo.assign(C, C + ni * nj);\n}}\n",
}


@pytest.fixture(scope="module")
def gemm():
    prompts, _ = load_tasks(preset("eval", models=["oracle:reference"], tasks=("polybench",),
                                   max_prompts_per_task=None))
    return next(p for p in prompts if p.prompt_id == "gemm")


def test_results_kept_between_calls_are_wrong_answers(sandbox, gemm):
    scores, info = score_problem(sandbox, gemm.spec, CANDIDATES, ProbeSettings(repeats=3, max_repeats=5, target_s=0.1))
    assert scores["honest"].verdict == "OK" and scores["honest"].correct, scores["honest"]
    for name in ("first_call_only", "cache_across_calls"):
        s = scores[name]
        assert s.verdict == "WRONG_ANSWER" and s.speedup == 0.0 and "call 1" in s.message, (name, s)
    assert info["calls"] >= 2 and info["measurable"]
