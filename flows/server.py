"""Local Prefect servers as children that never outlive their command: `perfalign ui`'s, and
the one a command that runs flows starts when no PREFECT_API_URL is set (``local_api``).

The server (``prefect server start`` and the uvicorn and service processes it starts) runs in
a process group of its own; SIGTERM, SIGINT or SIGHUP to the command stops the whole group
(SIGTERM, then SIGKILL after a grace period), and on Linux the kernel sends it SIGTERM even if
the command itself is killed with SIGKILL: no server is left orphaned, holding the port.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

from perfalign.common.child_process import die_with_parent
from perfalign.config.defaults import DEFAULT_PORT

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
GRACE_S = 20.0  # uvicorn's graceful shutdown, then SIGKILL


def server_command(host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> list[str]:
    """Through this interpreter: a `prefect` console script beside it is not always there
    (pip install --user, a venv reusing another's packages)."""
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port), "--analytics-off"]


def server_env(host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> dict[str, str]:
    """Environment for the server process: the UI must call the API on the port it is served
    from (Prefect's UI reads PREFECT_UI_API_URL, which does not follow ``--port``)."""
    url = f"http://{host}:{port}/api"
    return dict(os.environ, PREFECT_UI_API_URL=url, PREFECT_API_URL=url, PREFECT_SERVER_API_HOST=host,
                PREFECT_SERVER_API_PORT=str(port))


class _Stop(Exception):
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
                                preexec_fn=die_with_parent)
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


class ServerStartError(RuntimeError):
    """The local API server did not come up: the message is one line."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_api(start_timeout_s: float = 900.0) -> Iterator[str]:
    """The Prefect API for one command's flows: PREFECT_API_URL when set, else a local server of
    this command's own, in place of Prefect's temporary (ephemeral) one.

    Prefect's temporary server is a child in the command's process group writing to its stdout:
    Ctrl-C reached it too, and with ``| tee`` a write to the closed pipe killed it, before the
    command could report its flow run as crashed, which then stayed "Running" for good. This
    one runs in its own session, writes to PREFECT_HOME/local-server.log, is stopped when the
    command ends (after the crash is reported) and, on Linux, dies with it."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    current = PREFECT_API_URL.value()
    if current:
        yield current
        return
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    log_path = Path(os.environ.get("PREFECT_HOME", ".")) / "local-server.log"
    env = dict(server_env("127.0.0.1", port), PREFECT_UI_ENABLED="false", PREFECT_SERVER_UI_ENABLED="false")
    with open(log_path, "a") as log:
        proc = subprocess.Popen(server_command("127.0.0.1", port), env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=die_with_parent)
    try:
        _wait_healthy(proc, url, start_timeout_s, log_path)
        previous = os.environ.get("PREFECT_API_URL")
        os.environ["PREFECT_API_URL"] = url  # for worker processes (Dask) and threads without a context
        try:
            with temporary_settings(updates={PREFECT_API_URL: url}):
                yield url
        finally:
            _flush_run_logs()
            if previous is None:
                os.environ.pop("PREFECT_API_URL", None)
            else:
                os.environ["PREFECT_API_URL"] = previous
    finally:
        stop_group(proc)


def _wait_healthy(proc: subprocess.Popen, url: str, timeout_s: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None:
            raise ServerStartError(f"the local Prefect server exited with code {proc.returncode} (log: {log_path})")
        if time.monotonic() > deadline:
            raise ServerStartError(f"the local Prefect server did not answer within {timeout_s:.0f} s (log: "
                                   f"{log_path}); start one with `perfalign ui` and export PREFECT_API_URL")
        time.sleep(0.5)


def _flush_run_logs() -> None:
    """Ship the run logs still queued before the server goes."""
    try:
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=5)
    except Exception:  # noqa: BLE001 - logs are best effort at shutdown
        pass
