"""GRPO's tiered reward withholds only what common.outcomes allows: a DGEMM candidate
that fails in each way it can, measured for real (sandbox, probe harness), earns its tier's
penalty; withheld (reward None, tier ``infrastructure``) are only the reference's own failure, a
problem too small to time, and a sandbox fault the reference's control run shares. The other
tiers (compile, timeout, trap, wrong answer, format, library) are in tests/grpo/test_reward.py."""
from __future__ import annotations

import dataclasses
import platform
from types import SimpleNamespace

import pytest

from perfalign.common.languages import Language
from perfalign.grpo.measure import MeasureSettings, Rollout, _judge_correct, evaluate_rollout, worker_state
from perfalign.grpo.reward import WITHHELD_TIER, judge_verdict, tier_of_verdict
from perfalign.grpo.static import TECHNIQUES
from perfalign.grpo.tasks import dgemm_task
from perfalign.sandbox import CompileInfo, RunResult, Sandbox, Verdict

SETTINGS = MeasureSettings(validate_time_s=2.0, repeats=2, max_repeats=2, target_s=0.05, peak_seconds=0.1,
                           peak_n=256)
ALL = tuple(TECHNIQUES)
SIG = "void dgemm(int n, double alpha, const double* A, const double* B, double beta, double* C)"
LOOP = """ {
  for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) {
    double s = 0; for (int k = 0; k < n; ++k) s += A[i*n+k] * B[k*n+j];
    C[i*n+j] = alpha * s + beta * C[i*n+j]; } }"""
NAIVE = SIG + LOOP

# name -> (code, the tiers it may earn): every one the candidate's own doing, none withheld
FAILURES = {
    # killed at its 1 GB limit, or stopped first by the 2 s CPU limit (one test run here, once,
    # before reaching 1 GB; the cause was not pinned down): its own fault either way
    "memory": (SIG + " { size_t m = (size_t)8 << 30; char* p = new char[m];"
               " for (size_t i = 0; i < m; i += 4096) p[i] = 1; C[0] += p[m - 4096]; }", {"runtime", "timeout"}),
    "output_flood": ("#include <cstdio>\n" + SIG + " { for (int i = 0; i < (1 << 22); ++i)"
                     " std::fputs(\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n\", stdout); }", {"runtime", "verification"}),
    # the work done only at the validation sizes (37, 64): the timed calls' results are forged
    "work_only_when_validated": ("#include <cstring>\n" + SIG.replace("dgemm(", "dgemm_ok(") + LOOP + "\n" + SIG
                                 + " { if (n < 100) dgemm_ok(n, alpha, A, B, beta, C);"
                                 " else std::memset(C, 0, sizeof(double) * n * n); }", {"verification"}),
    # a result that is not a number
    "nan_result": (SIG.replace("dgemm(", "dgemm_ok(") + LOOP + "\n" + SIG
                   + " { dgemm_ok(n, alpha, A, B, beta, C); C[n] = __builtin_nan(\"\"); }", {"verification"}),
    "killed_by_seccomp": (SIG + " { asm volatile(\"int $0x80\" :: \"a\"(20)); }", {"runtime"}),
    "over_budget": (SIG + " {\n#pragma omp parallel for num_threads(4)\n" + LOOP[2:], {"format"}),
}


@pytest.fixture(scope="module")
def task():
    return dgemm_task("reduced", threads=1)


def run(task, code):
    return evaluate_rollout(Rollout("t", task.name, code, ALL, mode="code"), task, SETTINGS)


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_each_candidate_failure_is_penalized(task, name):
    if name == "killed_by_seccomp" and platform.machine() != "x86_64":
        pytest.skip("a 32-bit system call needs x86_64")
    code, tiers = FAILURES[name]
    rec = run(task, code)
    assert rec["tier"] in tiers, (name, rec["verdict"], rec["message"][:300])
    assert rec["reward"] is not None and rec["reward"] < 0 and not rec["withheld"], rec
    assert rec["cause"] not in ("", "infrastructure", "reference_failed")


class InjectedFaults:
    """The worker's real sandbox, except runs of a candidate holding ``marker`` (every run when
    ``broken``) come back SANDBOX_ERROR: an infrastructure fault no test program can cause."""

    def __init__(self, real, marker="/* breaks the runner */"):
        self.real, self.marker, self.broken, self.seen = real, marker, False, []
        self.retries = real.retries

    def run_job(self, job):
        src = job.extra_sources.get("candidate.cpp", "")
        self.seen.append(self.marker in src)
        if self.broken or self.marker in src:
            return RunResult(Verdict.SANDBOX_ERROR, "injected", Language.CPP, True, CompileInfo(ok=True),
                             message="sandbox runner failed (exit 1): injected")
        return self.real.run_job(job)

    def run_job_retrying(self, job, retries=None):  # the sandbox's retry policy over the faulty run_job
        return Sandbox.run_job_retrying(self, job, retries)


@pytest.fixture
def faulty_session(task):
    session = worker_state(SETTINGS).session(task)  # the worker's own, prepared with the real sandbox
    real = session.sb
    session.sb = InjectedFaults(real)
    try:
        yield session.sb
    finally:
        session.sb = real


def test_the_candidates_own_sandbox_error_is_penalized(task, faulty_session):
    rec = run(task, "/* breaks the runner */\n" + NAIVE)
    assert rec["verdict"] == "SANDBOX_ERROR" and rec["tier"] == "runtime" and rec["reward"] == -20.0, rec["message"]
    assert not rec["withheld"] and rec["cause"] == "candidate_sandbox_error"
    assert faulty_session.seen[-1] is False  # the control (the reference) ran after it, for real


def test_a_broken_sandbox_is_withheld(task, faulty_session):
    faulty_session.broken = True
    rec = run(task, NAIVE)
    assert rec["tier"] == WITHHELD_TIER and rec["reward"] is None and rec["withheld"], rec["message"]
    assert rec["cause"] == "infrastructure"


def test_the_references_own_failure_is_withheld(task):
    broken = dataclasses.replace(task, name="dgemm_broken_reference",
                                 problem=dataclasses.replace(task.problem, reference=SIG + " { __builtin_trap(); }"))
    rec = run(broken, NAIVE)
    assert rec["tier"] == WITHHELD_TIER and rec["reward"] is None and rec["withheld"], rec["message"]
    assert rec["cause"] == "reference_failed" and "unusable" in rec["message"]


def test_correct_but_unrewardable_is_withheld_only_for_the_problems_reasons():
    def score(**kw):
        return SimpleNamespace(**{"flags": [], "runtime_s": 1e-3, "baseline_s": 1e-3, "message": "", **kw})

    tier, out, _ = _judge_correct(score(flags=["unmeasurable"], runtime_s=None, baseline_s=None), None, "")
    assert tier == WITHHELD_TIER and out.cause == "unmeasurable_problem"
    tier, out, _ = _judge_correct(score(baseline_s=0.0), None, "")
    assert tier == WITHHELD_TIER and out.cause == "reference_failed"
    tier, out, _ = _judge_correct(score(), None, "")  # a time it cannot say why is missing: penalized
    assert tier == "verification" and not out.withheld
    tier, out, _ = _judge_correct(score(flags=["fast_repeat"]), 3.0, "")  # state kept between runs
    assert tier == "verification" and out.cause == "fast_repeat"
    assert _judge_correct(score(), 3.0, "fine") == ("ok", None, "fine")


def test_verdict_tiers_default_to_a_penalty():
    assert judge_verdict("SANDBOX_ERROR") == ("runtime", judge_verdict("SANDBOX_ERROR")[1])
    assert judge_verdict("SANDBOX_ERROR", "OK")[0] == "runtime"
    assert judge_verdict("SANDBOX_ERROR", "SANDBOX_ERROR")[0] == WITHHELD_TIER
    assert judge_verdict("UNSUPPORTED_LANGUAGE")[0] == "runtime"
    assert tier_of_verdict("A_VERDICT_NOBODY_KNOWS") == "runtime"
    assert judge_verdict("OK") == ("ok", None)


def test_a_rollout_whose_measurement_raises_is_penalized():
    """Dask worker path: the measurement raised (here: no such task) -> runtime penalty, not None."""
    pytest.importorskip("distributed")
    from perfalign.grpo.workers import BenchmarkCluster

    with BenchmarkCluster(n_workers=1, settings=SETTINGS) as cluster:
        (rec,) = cluster.evaluate([Rollout("x", "dgemm", NAIVE, ALL, mode="code")], {"dgemm": None})
    assert rec["tier"] == "runtime" and rec["reward"] == -20.0 and not rec["withheld"], rec
    assert rec["cause"] == "measurement_raised"
