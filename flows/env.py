"""Process-wide settings that must be in place before Prefect is imported."""
from __future__ import annotations

import os
import warnings
from pathlib import Path


def project_dir() -> Path:
    """Where perfalign keeps run state (Prefect's database, run directories): PERFALIGN_HOME,
    else ./.perfalign — a project directory, not the home directory."""
    return Path(os.environ.get("PERFALIGN_HOME") or Path.cwd() / ".perfalign").resolve()


def configure_prefect() -> None:
    os.environ.setdefault("PREFECT_HOME", str(project_dir() / "prefect"))
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)  # sqlite cannot create dirs
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # The temporary API server needs ~10 s on an idle 2-core machine, more when it is busy.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    # Offline machines: never try to fetch models or datasets unless asked.
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    # Known, harmless library notices that would bury the progress bars (TRL's PPOTrainer
    # lives in trl.experimental in the pinned 1.12; transformers 5 renamed a property TRL reads).
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    warnings.filterwarnings("ignore", message=r".*is_gradient_checkpointing.*", category=FutureWarning)
