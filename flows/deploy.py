"""`perfalign ui` and `perfalign deploy`: a local Prefect server + UI, and the flows served
as deployments with cron schedules."""
from __future__ import annotations

import os
import urllib.request
from pathlib import Path

from perfalign.config.defaults import DEFAULT_PORT, NIGHTLY_PERF_CRON, WEEKLY_PIPELINE_CRON

from .env import project_dir


def api_url_or_none(default_port: int = DEFAULT_PORT) -> str | None:
    """PREFECT_API_URL if set, else the local `perfalign ui` server when it answers."""
    url = os.environ.get("PREFECT_API_URL") or f"http://127.0.0.1:{default_port}/api"
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=3) as r:
            return url if r.status == 200 else None
    except OSError:
        return None


def make_deployments(cfg, *, out_root: str, perf_cron: str = NIGHTLY_PERF_CRON,
                     pipeline_cron: str = WEEKLY_PIPELINE_CRON, profile: str | None = None,
                     config_path: str | None = None, overrides: list[str] | None = None):
    """The nightly CodeContests-Perf rebuild and the weekly pipeline, both from the configuration
    ``cfg`` (loaded from ``profile``, ``config_path`` and ``overrides``, which the pipeline's runs load again)."""
    from .perf import build_codecontests_perf
    from .pipeline import pipeline

    perf = build_codecontests_perf.to_deployment(
        name="nightly-incremental", cron=perf_cron, tags=["perfalign"],
        description="Incremental CodeContests-Perf rebuild: measures only what is new or missing.",
        parameters={"out": str(Path(out_root) / "codecontests_perf"), "settings": cfg.perf, "sandbox": cfg.sandbox,
                    "max_in_flight": 2 * cfg.sandbox.worker_count()})
    full = pipeline.to_deployment(
        name="weekly", cron=pipeline_cron, tags=["perfalign"],
        description="The whole pipeline; unchanged stages are skipped.",
        parameters={"out": str(Path(out_root) / "pipeline"), "profile": profile or cfg.profile,
                    "config_path": config_path, "overrides": list(overrides or [])})
    return [perf, full]


def serve_deployments(cfg, **kwargs) -> None:
    """Blocks: registers the deployments and executes their scheduled runs."""
    from prefect import serve

    serve(*make_deployments(cfg, **kwargs), limit=1)


def default_out_root() -> str:
    return str(project_dir() / "scheduled")
