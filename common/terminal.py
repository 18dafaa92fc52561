"""The terminal: one Rich console (stderr) that carries the progress bars and every log line.

Log records reach it through one handler on the root logger, which replaces Prefect's console
handler. A record printed through the console that draws the live bars lands above them, so a
library WARNING never breaks a bar (a plain ``StreamHandler`` writes to the stream it captured
and tears the bar). Each record is printed once and in one line: libraries that add their own
stderr handler (huggingface_hub, datasets, transformers) are routed here instead, and
tracebacks stay in the stage log and the Prefect UI's run log.
"""
from __future__ import annotations

import copy
import logging

from rich.console import Console
from rich.logging import RichHandler

CONSOLE = Console(stderr=True)
# Libraries that install a default stderr handler when first imported (and transformers also
# stops propagation): each would print its warnings a second time, past the bars.
SELF_HANDLING_LIBRARIES = ("huggingface_hub", "datasets", "transformers", "trl", "accelerate")


class ConsoleLogHandler(RichHandler):
    """WARNING and above in one line each: ``level logger: message``, the exception's type and
    message instead of its traceback."""

    def __init__(self, level: int = logging.WARNING) -> None:
        super().__init__(level=level, console=CONSOLE, show_time=False, show_path=False, markup=False,
                         rich_tracebacks=False, highlighter=None)
        self.setFormatter(_OneLineFormatter())

    quiet_prefect = False  # set on Ctrl-C (cli.session): Prefect's run messages stay in the run logs

    def emit(self, record: logging.LogRecord) -> None:
        if self.quiet_prefect and record.name.startswith("prefect"):
            return
        if record.exc_info or record.exc_text:
            record = copy.copy(record)  # other handlers (the run log) keep the traceback
            exc = record.exc_info[1] if record.exc_info else None
            if exc is not None and str(exc) not in record.getMessage():
                record.msg, record.args = f"{record.getMessage()} ({type(exc).__name__}: {exc})", None
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        super().emit(record)


class _OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        who = record.name
        if getattr(record, "task_run_name", None):
            who = f"task {record.task_run_name!r}"
        elif getattr(record, "flow_run_name", None):
            who = f"flow {record.flow_run_name!r}"
        return f"{who}: {record.getMessage()}"


class _RoutedLibraryLogger(logging.Logger):
    """The root logger of a library that installs its own stderr handler: that handler is
    refused and propagation kept, so its records reach the one console handler (and the run
    log) once."""

    def addHandler(self, hdlr: logging.Handler) -> None:  # noqa: N802 (logging's name)
        if type(hdlr) is not logging.StreamHandler:
            super().addHandler(hdlr)

    @property
    def propagate(self) -> bool:  # type: ignore[override]
        return True

    @propagate.setter
    def propagate(self, value: bool) -> None:
        pass


def route_logging_to_console(level: int = logging.WARNING) -> ConsoleLogHandler:
    """Install the console handler on the root logger (once per process) in place of Prefect's,
    and route the self-handling libraries and Python warnings through it."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if isinstance(h, ConsoleLogHandler):
            return h
        if type(h).__name__ == "PrefectConsoleHandler":
            root.removeHandler(h)
    handler = ConsoleLogHandler(level)
    root.addHandler(handler)
    for name in SELF_HANDLING_LIBRARIES:
        existing = logging.Logger.manager.loggerDict.get(name)
        if isinstance(existing, logging.Logger):  # imported already: drop its own handler
            for h in list(existing.handlers):
                if type(h) is logging.StreamHandler:
                    existing.removeHandler(h)
            existing.propagate = True
        else:
            previous = logging.getLoggerClass()
            logging.setLoggerClass(_RoutedLibraryLogger)
            try:
                logging.getLogger(name)
            finally:
                logging.setLoggerClass(previous)
    logging.captureWarnings(True)
    return handler


def quiet_prefect_on_console() -> None:
    """Prefect's records off the terminal from now on (they still reach the run logs)."""
    route_logging_to_console().quiet_prefect = True
