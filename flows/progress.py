"""Rich progress bars in the terminal, one per kind of work, fed by common.progress reports."""
from __future__ import annotations

import contextlib
from typing import Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from perfalign.common.progress import listening


@contextlib.contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """For the length of the block, every ``common.progress.report`` shows as a bar (a new bar
    the first time a kind of work reports)."""
    if not enabled:
        yield
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False) as bar:
        bars: dict[str, int] = {}

        def show(what: str, done: int, total: int) -> None:
            if what not in bars:
                bars[what] = bar.add_task(what, total=None)
            bar.update(bars[what], completed=done, total=max(total, done) or None)

        with listening(show):
            yield
