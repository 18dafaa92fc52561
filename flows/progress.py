"""A rich progress bar for long CLI steps, fed by (done, total) callbacks."""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextlib.contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    if not enabled:
        yield lambda done, total: None
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False) as bar:
        tid = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(tid, completed=done, total=max(total, done) or None)

        yield update
