"""One candidate, one problem, one score: the contract `perfalign eval score` prints and RL
rewards drive, and the task lists of `perfalign eval tasks`. Each suite's task (tasks/) loads its
problem and scores (``EvalTask.score_candidate``); this module only picks the task.

    score, info = score_candidate("pareval", "02_dense_la_gemm", code, model="omp",
                                  pareval_dir="../shared/external/pareval")
    score.contract()  # {verdict, correct, speedup, runtime_s, baseline_s, clock, flags}
"""
from __future__ import annotations

from pathlib import Path

from perfalign.measure.harness import ProbeScore, ProblemUnusable
from perfalign.sandbox import Sandbox, SandboxSettings

from .records import CandidateRequest, ScoreInputError
from .tasks.registry import TASKS

SUITES = tuple(name for name, t in TASKS.items() if t.scores_one_by_one)


def score_candidate(suite: str, problem: str, code: str, *, sandbox: Sandbox | SandboxSettings = SandboxSettings(),
                    **request) -> tuple[ProbeScore, dict]:
    """Score ``code`` on one problem, its baseline measured in the same session (``request``: the
    fields of CandidateRequest; ``sandbox``: an open one, or the settings to open one with). Raises
    ScoreInputError for a request that names nothing scorable and
    ProblemUnusable when the suite's own reference cannot run here; anything the candidate does is a score."""
    if suite not in SUITES:
        raise ScoreInputError(f"unknown suite {suite!r}; choose from {SUITES}")
    if not code.strip():
        raise ScoreInputError("the candidate code is empty")
    req = CandidateRequest(**request)
    own = isinstance(sandbox, SandboxSettings)
    sb = Sandbox.from_settings(sandbox, workers=1) if own else sandbox
    try:
        return TASKS[suite].score_candidate(problem, code, req, sb)
    finally:
        if own:
            sb.close()


def list_tasks(pareval_dir: str | None = None, polybench_dir: str | None = None,
               codecontests: str | None = None) -> dict:
    """Problem names per suite (ParEval: with the execution models it has prompts for); without a
    checkout, the bundled sample's (rows with ``"bundled": True``); a suite that can list nothing
    gets a ``<suite>_note`` instead."""
    req = CandidateRequest(pareval_dir=pareval_dir, polybench_dir=polybench_dir, codecontests=codecontests)
    out: dict = {}
    for suite in SUITES:
        names = TASKS[suite].problem_names(req)
        out[suite if isinstance(names, list) else f"{suite}_note"] = names
    return out


def read_code(path: str | Path) -> str:
    p = Path(path)
    if not p.is_file():
        raise ScoreInputError(f"--code {p}: no such file")
    return p.read_text(encoding="utf-8", errors="surrogateescape")

__all__ = ["SUITES", "ScoreInputError", "ProblemUnusable", "score_candidate", "list_tasks",
           "read_code"]
