"""What a command that runs flows holds for its length: the Prefect API (flows.server.local_api:
a local server of its own unless PREFECT_API_URL is set), the terminal's progress bars, and
the mark of who runs its flow runs.

Every flow run of the command carries an owner tag (host, boot, PID and the process's start
time, as flows.runstate records a stage's owner): a later command, or `perfalign status`,
marks the unfinished runs of an owner that is gone (kill -9, out of memory, a reboot) Crashed,
so the UI shows no run that never ends. A Ctrl-C ends the command with one line, not Prefect's
crash banners (the runs still end Crashed in the UI)."""
from __future__ import annotations

import contextlib
import logging
import signal
from typing import Iterator

from rich.markup import escape

from perfalign.common.terminal import CONSOLE, quiet_prefect_on_console
from perfalign.flows.runstate import RESUME_HINT, describe_owner, owner_alive, owner_tag, tag_owner
from perfalign.flows.server import ServerStartError, local_api

from .progress import progress_bars

_log = logging.getLogger("perfalign.cli.session")
INTERRUPTED = f"interrupted; {RESUME_HINT}"


def crash_orphaned_runs() -> int:
    """Mark Crashed the unfinished flow runs (and their unfinished task runs) whose owner process
    is gone; returns how many flow runs. Best effort: a failure here is logged, never raised."""
    try:
        return _crash_orphaned_runs()
    except Exception as e:  # noqa: BLE001 - the command's own work goes on
        _log.warning("could not check for flow runs of dead processes: %s: %s", type(e).__name__, e)
        return 0


def _crash_orphaned_runs() -> int:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        FlowRunFilterState,
        FlowRunFilterStateType,
        TaskRunFilter,
        TaskRunFilterState,
        TaskRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Crashed

    open_states = [StateType.RUNNING, StateType.PENDING, StateType.SCHEDULED, StateType.PAUSED]
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=open_states))), limit=200)
        orphans = [(r, tag_owner(r.tags)) for r in runs if owner_alive(tag_owner(r.tags)) is False]
        for run, owner in orphans:
            msg = f"{describe_owner(owner)} ended without reporting (killed?); {RESUME_HINT}"
            client.set_flow_run_state(run.id, Crashed(message=msg), force=True)
        if orphans:
            tasks = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[r.id for r, _ in orphans])),
                task_run_filter=TaskRunFilter(state=TaskRunFilterState(type=TaskRunFilterStateType(any_=open_states))))
            for t in tasks:
                client.set_task_run_state(t.id, Crashed(message="its flow run's process is gone"), force=True)
    return len(orphans)


@contextlib.contextmanager
def flow_session(bars: bool = True) -> Iterator[str]:
    """Yields the API URL. The bars close before the server stops, so a crash is reported
    (the run ends Crashed) and printed before the command exits. Ctrl-C: one line, exit 130."""
    from prefect import tags

    try:
        with contextlib.ExitStack() as stack:
            try:
                url = stack.enter_context(local_api())
            except ServerStartError as e:
                CONSOLE.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
                raise SystemExit(2) from None
            crash_orphaned_runs()
            stack.enter_context(tags(owner_tag()))
            stack.enter_context(_interrupt_quiets_prefect())
            stack.enter_context(progress_bars(enabled=bars))
            yield url
    except KeyboardInterrupt:
        CONSOLE.print(f"[yellow]{INTERRUPTED}[/yellow]")
        raise SystemExit(130) from None


@contextlib.contextmanager
def _interrupt_quiets_prefect() -> Iterator[None]:
    """From the first Ctrl-C on, Prefect's run messages (crash banners, tasks stopped with the
    run) stay in the run logs and off the terminal."""
    def on_int(signum, frame):
        quiet_prefect_on_console()
        signal.default_int_handler(signum, frame)

    try:
        previous = signal.signal(signal.SIGINT, on_int)
    except ValueError:  # not the main thread: Ctrl-C is not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
