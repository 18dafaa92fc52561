"""Rich progress bars in the terminal, one per kind of work, fed by common.progress reports.
They are drawn on common.terminal's console, the one every log line goes through, so a log line
prints above the bars instead of tearing them."""
from __future__ import annotations

import contextlib
from typing import Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from perfalign.common.progress import listening
from perfalign.common.terminal import CONSOLE


@contextlib.contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """For the length of the block, every ``common.progress.report`` shows as a bar (a new bar
    the first time a kind of work reports)."""
    if not enabled:
        yield
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=CONSOLE, transient=False) as bar:
        bars: dict[str, int] = {}

        def show(what: str, done: int, total: int) -> None:
            if what not in bars:
                bars[what] = bar.add_task(what, total=None)
            bar.update(bars[what], completed=done, total=max(total, done) or None)

        with listening(show):
            yield
