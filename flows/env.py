"""Process-wide settings that must be in place before Prefect is imported."""
from __future__ import annotations

import functools
import logging
import os
import warnings
from pathlib import Path


def project_dir() -> Path:
    """Where perfalign keeps run state (Prefect's database, run directories): PERFALIGN_HOME,
    else ./.perfalign — a project directory, not the home directory."""
    return Path(os.environ.get("PERFALIGN_HOME") or Path.cwd() / ".perfalign").resolve()


LIBRARY_LOGGERS = ("perfalign",)  # every library logger is perfalign.<package>...: one parent carries them all


def configure_prefect() -> None:
    """Every PREFECT_* variable before the first `import prefect`: Prefect reads its settings then.
    Importing ``perfalign.flows`` calls it; it imports nothing, so a no-op run stays Prefect-free."""
    os.environ.setdefault("PREFECT_HOME", str(project_dir() / "prefect"))
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)  # sqlite cannot create dirs
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # INFO reaches the Prefect UI's run logs; the terminal shows warnings only (common.terminal).
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    # The temporary API server needs ~10 s on an idle 2-core machine, more when it is busy.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    # Offline machines: never try to fetch models or datasets unless asked.
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    # Known, harmless library notices that would bury the progress bars (TRL's PPOTrainer
    # lives in trl.experimental in the pinned 1.12; transformers 5 renamed a property TRL reads).
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    warnings.filterwarnings("ignore", message=r".*is_gradient_checkpointing.*", category=FutureWarning)


def route_library_logs() -> None:
    """Library logs to the Prefect run they execute in and to the terminal, once per process:
    each flow module calls it on import (a served deployment's run imports nothing else first)."""
    _library_loggers_at_info()
    _progress_to_run_log()


def _library_loggers_at_info() -> None:
    """INFO from the libraries goes to the logs of the Prefect run it executes in (the UI) and to
    the stage log files; the terminal prints warnings only, once, above the progress bars
    (common.terminal's handler on the root logger, where these records propagate).

    The run handler is attached here rather than through PREFECT_LOGGING_EXTRA_LOGGERS, which
    only works when it is set before Prefect first configures logging."""
    from prefect.context import FlowRunContext, TaskRunContext
    from prefect.logging.handlers import APILogHandler

    from perfalign.common.terminal import route_logging_to_console

    class RunLogHandler(APILogHandler):
        def emit(self, record: logging.LogRecord) -> None:
            if FlowRunContext.get() or TaskRunContext.get():  # outside a run: nothing to send
                super().emit(record)

    route_logging_to_console()
    to_run = RunLogHandler()
    for name in LIBRARY_LOGGERS:
        lg = logging.getLogger(name)
        if getattr(lg, "_perfalign_routed", False):
            continue
        lg.setLevel(logging.INFO)
        lg.propagate = True
        lg.addHandler(to_run)
        lg._perfalign_routed = True


@functools.cache  # once per process
def _progress_to_run_log() -> None:
    """common.progress reports also go to the log (at 0, 25, 50, 75, 100 %): the Prefect UI's
    run log and the stage log files show how far a long stage is."""
    from perfalign.common.progress import LogListener, subscribe

    subscribe(LogListener())
