"""Defaults of the commands that are not settings (the Prefect server's port, the deployments'
schedules, where runs are written): each written once here, for the CLI and the flows alike.
Imports nothing: the CLI starts without Prefect (and without importing ``perfalign.flows``, whose
import sets Prefect's environment)."""
from __future__ import annotations

from pathlib import Path

DEFAULT_PORT = 4200                 # the local Prefect API and UI
NIGHTLY_PERF_CRON = "0 2 * * *"     # nightly incremental CodeContests-Perf rebuild
WEEKLY_PIPELINE_CRON = "0 3 * * 0"  # weekly full pipeline run (Sunday 03:00)
RUNS_ROOT = Path("runs")            # run directories: RUNS_ROOT/<profile> (the pipeline), RUNS_ROOT/grpo
GRPO_RUN_DIR = RUNS_ROOT / "grpo"
