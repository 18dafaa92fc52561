"""Flow `kernel_eval`: thin Prefect wiring around kernelenv/ (one task per problem: scale,
torch.compile baseline and candidate score, every program in the sandbox; then the report)."""
from __future__ import annotations

import dataclasses

from prefect import flow, task

from perfalign.common.progress import report as report_progress
from perfalign.sandbox import SandboxSettings

from .env import route_library_logs

route_library_logs()


@task(task_run_name="score {problem_name}")
def score_problem(problem_path: str, problem_name: str, candidate: str, source: str, config,
                  sandbox: SandboxSettings) -> dict:
    from perfalign.kernelenv import Scorer, load_problem

    with Scorer(config, sandbox) as scorer:
        return scorer.score(load_problem(problem_path), source, candidate).to_dict()


@flow(name="kernel_eval")
def kernel_eval(problems: str, candidates: str, out: str, config=None,
                sandbox: SandboxSettings = SandboxSettings()) -> dict:
    """Score every problem's candidate (sequentially: timings must not contend) and write the report;
    ``sandbox``: the [sandbox] settings each score's sandbox opens with."""
    from perfalign.kernelenv import KernelScore, ScoreConfig
    from perfalign.kernelenv.evaluate import config_for, plan, write_report

    config = config_for(candidates, config or ScoreConfig())
    items, errors = plan(problems, candidates)
    scores = []
    for i, (problem, name, source) in enumerate(items):
        d = score_problem(str(problem.path), problem.name, name, source, config, sandbox)
        scores.append(KernelScore(**d))
        report_progress("kernels scored", i + 1, len(items))
    report = write_report(out, scores, errors, config)
    return {"out": out, "metrics": report["metrics"], "errors": errors, "config": dataclasses.asdict(config)}
