"""Rich progress bars for long CLI steps, fed by (done, total) callbacks."""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Update = Callable[[int, int], None]


@contextlib.contextmanager
def progress_bars(*descriptions: str, enabled: bool = True) -> Iterator[list[Update]]:
    """One live display with a bar per description; yields an update callback per bar."""
    if not enabled:
        yield [lambda done, total: None for _ in descriptions]
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False) as bar:
        def updater(tid) -> Update:
            return lambda done, total: bar.update(tid, completed=done, total=max(total, done) or None)

        yield [updater(bar.add_task(d, total=None)) for d in descriptions]


@contextlib.contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Update]:
    with progress_bars(description, enabled=enabled) as (update,):
        yield update
