"""What a command that runs flows holds for its length: the Prefect API (flows.server.local_api:
a local server of its own unless PREFECT_API_URL is set) and the terminal's progress bars."""
from __future__ import annotations

import contextlib
from typing import Iterator

from rich.markup import escape

from .progress import progress_bars
from .server import ServerStartError, local_api
from .terminal import CONSOLE


@contextlib.contextmanager
def flow_session(bars: bool = True) -> Iterator[str]:
    """Yields the API URL. The bars close before the server stops, so a crash is reported
    (the run ends Crashed) and printed before the command exits."""
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(local_api())
        except ServerStartError as e:
            CONSOLE.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
            raise SystemExit(2) from None
        stack.enter_context(progress_bars(enabled=bars))
        yield url
