"""Flow `evaluate`: thin Prefect wiring around evaluation/ (generation, sandboxed execution,
pass@k / speedup_n@k, report and figures)."""
from __future__ import annotations

from pathlib import Path

from .env import configure_prefect

configure_prefect()

from prefect import flow, task  # noqa: E402


@task(task_run_name="evaluate {config.tasks}")
def run_evaluation(config, out: str) -> dict:
    from perfalign.evaluation import evaluate as _evaluate

    report = _evaluate(config, out)
    return {"report": str(Path(out) / "report.md"), "out": out,
            "scores": [s if isinstance(s, dict) else getattr(s, "__dict__", str(s)) for s in report.scores]}


@flow(name="evaluate")
def evaluate(config, out: str) -> dict:
    return run_evaluation(config, out)
