"""`perfalign ui`: the local Prefect server as a child that never outlives the command.

The server (``prefect server start`` and the uvicorn and service processes it starts) runs in
a process group of its own; SIGTERM, SIGINT or SIGHUP to the command stops the whole group
(SIGTERM, then SIGKILL after a grace period), and on Linux the kernel sends it SIGTERM even if
the command itself is killed with SIGKILL. Before, SIGTERM killed the command and left the
server orphaned, holding the port.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

from .deploy import server_command, server_env

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
GRACE_S = 20.0  # uvicorn's graceful shutdown, then SIGKILL


class _Stop(Exception):
    pass


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def stop_group(proc: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """SIGTERM to the child's process group, SIGKILL to what is left after ``grace_s``."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; its group may not be
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return


def run_server(host: str, port: int) -> int:
    """Serve until the server exits (its exit code) or the command is told to stop (0)."""
    def stop(signum, frame):
        raise _Stop(signum)

    previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    proc = None
    try:
        proc = subprocess.Popen(server_command(host, port), env=server_env(host, port), start_new_session=True,
                                preexec_fn=_die_with_parent)
        return proc.wait()
    except (_Stop, KeyboardInterrupt):
        return 0
    finally:
        for s in STOP_SIGNALS:  # a second signal must not interrupt the shutdown
            signal.signal(s, signal.SIG_IGN)
        if proc is not None:
            stop_group(proc)
        for s, h in previous.items():
            signal.signal(s, h)
