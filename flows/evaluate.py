"""Flow `evaluate`: thin Prefect wiring around evaluation/ (generation, sandboxed execution,
pass@k / speedup_n@k, report and figures)."""
from __future__ import annotations

from pathlib import Path

from .env import configure_prefect

configure_prefect()

from prefect import flow, task  # noqa: E402


def eval_config(profile: str, models: list[str], tasks: list[str] | None = None, codecontests_dir: str | None = None,
                **overrides):
    from perfalign.evaluation import EvalConfig

    if profile not in ("production", "embedded"):
        raise ValueError(f"unknown evaluation profile {profile!r} (production or embedded)")
    make = EvalConfig.embedded if profile == "embedded" else EvalConfig.production
    kw = {k: v for k, v in overrides.items() if v is not None}
    if tasks:
        kw["tasks"] = tuple(tasks)
    cfg = make(models=list(models), codecontests_dir=codecontests_dir, **kw)
    cfg.validate()
    return cfg


@task(task_run_name="evaluate {config.tasks}")
def run_evaluation(config, out: str) -> dict:
    from perfalign.evaluation import evaluate as _evaluate

    report = _evaluate(config, out)
    return {"report": str(Path(out) / "report.md"), "out": out,
            "scores": [s if isinstance(s, dict) else getattr(s, "__dict__", str(s)) for s in report.scores]}


@flow(name="evaluate")
def evaluate(config, out: str) -> dict:
    return run_evaluation(config, out)
