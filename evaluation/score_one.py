"""One candidate, one problem, one score: the contract `perfalign eval score` prints and RL
rewards drive, and the task lists of `perfalign eval tasks`.

    score, info = score_candidate("pareval", "02_dense_la_gemm", code, model="omp",
                                  pareval_dir="../shared/external/pareval")
    score.contract()  # {verdict, correct, speedup, runtime_s, baseline_s, clock, flags}
"""
from __future__ import annotations

import shutil
from pathlib import Path

from perfalign.measure.harness import ProbeScore, ProbeSettings, ProblemUnusable, score_problem
from perfalign.measure.probe import ProbeProblem
from perfalign.sandbox import Sandbox
from perfalign.sandbox.clock import DEFAULT_CLOCK

from .contest_score import ContestSettings, contest_names, load_contest, score_contest

SUITES = ("pareval", "polybench", "codecontests")


class ScoreInputError(ValueError):
    """The request names no scorable problem (a bad suite, problem, model or folder)."""


def load_problem(suite: str, problem: str, model: str = "serial", *, pareval_dir: str | None = None,
                 polybench_dir: str | None = None, profile: str = "embedded", threads: int = 2,
                 ranks: int = 2) -> ProbeProblem:
    if suite == "pareval":
        from .tasks.pareval import ParEvalCheckout, ParEvalError

        if not pareval_dir:
            raise ScoreInputError("--pareval-dir is required: a ParEval checkout (parallelcodefoundry/ParEval)")
        if model == "mpi" and (shutil.which("mpicxx") is None or shutil.which("mpirun") is None):
            raise ScoreInputError("MPI problems need Open MPI (mpicxx, mpirun): apt-get install openmpi-bin "
                                  "libopenmpi-dev (scripts/setup.sh does)")
        try:
            return ParEvalCheckout(pareval_dir).problem(problem, model, profile, threads=threads, ranks=ranks)
        except (ParEvalError, FileNotFoundError) as e:
            raise ScoreInputError(str(e)) from None
    if suite == "polybench":
        from .tasks.polybench import PolyBenchCheckout, PolyBenchError

        if not polybench_dir:
            raise ScoreInputError("--polybench-dir is required: a PolyBench/C 4.2.1 checkout")
        try:
            return PolyBenchCheckout(polybench_dir).problem(problem, profile, model, threads=threads)
        except (PolyBenchError, FileNotFoundError) as e:
            raise ScoreInputError(str(e)) from None
    raise ScoreInputError(f"unknown suite {suite!r}; choose from {SUITES}")


def score_candidate(suite: str, problem: str, code: str, *, model: str = "serial", pareval_dir: str | None = None,
                    polybench_dir: str | None = None, codecontests: str | None = None, language: str = "cpp",
                    profile: str = "embedded", threads: int = 2, ranks: int = 2, repeats: int = 3,
                    max_rel_se: float | None = None, backend: str = "auto",
                    sandbox: Sandbox | None = None, clock: str = DEFAULT_CLOCK) -> tuple[ProbeScore, dict]:
    """Score ``code`` on one problem, its baseline measured in the same session. Raises
    ScoreInputError for a request that names nothing scorable and ProblemUnusable when the
    suite's own reference cannot run here; anything the candidate does is a score."""
    if suite not in SUITES:
        raise ScoreInputError(f"unknown suite {suite!r}; choose from {SUITES}")
    if not code.strip():
        raise ScoreInputError("the candidate code is empty")
    own = sandbox is None
    sb = sandbox or Sandbox(backend=backend, workers=1)
    try:
        if suite == "codecontests":
            from .contest_score import ContestError

            try:
                task = load_contest(problem, codecontests, language)
            except (ContestError, FileNotFoundError, ValueError) as e:
                raise ScoreInputError(str(e)) from None
            return score_contest(sb, task, code, ContestSettings(repeats=repeats, clock=clock))
        p = load_problem(suite, problem, model, pareval_dir=pareval_dir, polybench_dir=polybench_dir,
                         profile=profile, threads=threads, ranks=ranks)
        settings = ProbeSettings(repeats=repeats, clock=clock)
        if max_rel_se is not None:
            settings.max_rel_se = max_rel_se
        scores, info = score_problem(sb, p, {"candidate": code}, settings)
        return scores["candidate"], info
    finally:
        if own:
            sb.close()


def list_tasks(pareval_dir: str | None = None, polybench_dir: str | None = None,
               codecontests: str | None = None) -> dict:
    """Problem names per suite (ParEval: with the execution models it has prompts for)."""
    out: dict = {}
    if pareval_dir:
        from .tasks.pareval import MODELS, ParEvalCheckout

        co = ParEvalCheckout(pareval_dir)
        out["pareval"] = [{"problem": n, "models": [m for m in MODELS if (n, m) in co.prompts]} for n in co.names()]
    if polybench_dir:
        from .tasks.polybench import PolyBenchCheckout

        out["polybench"] = [{"problem": n, "models": ["serial", "omp"]}
                            for n in PolyBenchCheckout(polybench_dir).names()]
    out["codecontests"] = [{"problem": n, "models": ["cpp", "python3", "java"]} for n in contest_names(codecontests)]
    for key, d in (("pareval", pareval_dir), ("polybench", polybench_dir)):
        if not d:
            out.setdefault(f"{key}_note", f"give --{key}-dir (a checkout) to list {key}'s problems")
    return out


def read_code(path: str | Path) -> str:
    p = Path(path)
    if not p.is_file():
        raise ScoreInputError(f"--code {p}: no such file")
    return p.read_text(encoding="utf-8", errors="surrogateescape")


__all__ = ["SUITES", "ScoreInputError", "ProblemUnusable", "score_candidate", "list_tasks", "load_problem",
           "read_code"]
