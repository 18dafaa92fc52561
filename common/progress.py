"""The one progress mechanism: long work calls ``report(what, done, total)``; listeners render it
(the CLI's progress bars, the Prefect UI's run log). A registry like logging's handlers: the code
that works never knows who listens, and the CLI subscribes with ``listening(fn)`` for the length
of a command (no module globals patched from outside)."""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import Callable, Iterator

Listener = Callable[[str, int, int], None]  # (what, done, total)

_listeners: list[Listener] = []
_lock = threading.Lock()
log = logging.getLogger("perfalign.progress")


def report(what: str, done: int, total: int) -> None:
    """``done`` of ``total`` units of ``what`` (e.g. "align: sft steps") are finished."""
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(what, done, total)
        except Exception:  # a broken display must not stop the work
            log.debug("progress listener failed", exc_info=True)


def subscribe(listener: Listener) -> None:
    """Listen for the life of the process (e.g. the run log)."""
    with _lock:
        _listeners.append(listener)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[Listener]:
    """Listen for the length of a block (e.g. a command's progress bars)."""
    subscribe(listener)
    try:
        yield listener
    finally:
        with _lock:
            _listeners.remove(listener)


class LogListener:
    """Logs each ``what`` at its start, every ``step`` fraction and at its end (for the Prefect
    UI's run log, where a live bar cannot go)."""

    def __init__(self, logger: logging.Logger = log, step: float = 0.25) -> None:
        self.logger, self.step = logger, step
        self._next: dict[str, float] = {}

    def __call__(self, what: str, done: int, total: int) -> None:
        frac = done / total if total else 0.0
        if frac >= self._next.get(what, 0.0) or done >= total:
            self.logger.info("%s: %d/%d", what, done, total)
            self._next[what] = (int(frac / self.step) + 1) * self.step if done < total else 2.0
