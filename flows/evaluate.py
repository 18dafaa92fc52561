"""Flow `evaluate`: thin Prefect wiring around evaluation/ (generation, sandboxed execution,
pass@k / speedup_n@k, report and figures)."""
from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, task

from .env import route_library_logs
from .summaries import flow_run_name, headline, publish_markdown, publish_stage, run_label

route_library_logs()


def _evaluation_name(parameters: dict) -> str:
    config = parameters.get("config")
    tasks = getattr(config, "tasks", None) or ()
    models = getattr(config, "models", None) or ()
    return f"evaluate {', '.join(tasks)} ({len(models)} models)"


@task(task_run_name=_evaluation_name)
def run_evaluation(config, out: str, sandbox) -> dict:
    from perfalign.evaluation import evaluate as _evaluate

    report = _evaluate(config, out, sandbox=sandbox)
    # the scores as plain values (TaskScore.to_dict: PromptScores field by field, not their repr)
    # (per-prompt rows stay in report.json)
    scores = [{k: v for k, v in s.items() if k != "per_prompt"} for s in report.to_dict()["scores"]]
    return {"report": str(Path(out) / "report.md"), "out": out, "scores": scores}


@flow(name="evaluate", flow_run_name=flow_run_name("evaluate"))
def evaluate(config, out: str, sandbox) -> dict:
    """``config``: an EvalConfig; ``sandbox``: the [sandbox] settings (SandboxSettings)."""
    t0 = time.monotonic()
    result = run_evaluation(config, out, sandbox)
    run = run_label(out)
    publish_stage(run, "evaluate", {**result, "scores": [_headline_score(s) for s in result["scores"]]},
                  time.monotonic() - t0, line=headline("evaluate", result))
    publish_markdown(run, "evaluation-report", result["report"])
    return result


def _headline_score(s: dict) -> dict:
    """A score row for the table artifact (its per-prompt rows are in report.json)."""
    return {"model": s.get("model"), "task": s.get("task"), "prompts": s.get("prompts"), "samples": s.get("samples"),
            "pass@1": (s.get("pass_at") or {}).get("1"), "speedup_n@1": (s.get("speedup_at") or {}).get("1")}
