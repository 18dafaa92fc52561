"""`perfalign ui` stops its Prefect server on SIGTERM and SIGINT (`kill` must not leave the
server orphaned and holding the port)."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_ui_stops_its_server_on_signal(tmp_path, sig):
    port = _free_port()
    env = dict(os.environ, PERFALIGN_HOME=str(tmp_path), PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_API_URL="")
    log = open(tmp_path / "ui.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "perfalign.cli", "ui", "--port", str(port)], cwd=ROOT,
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=3) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "ui.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(1)
        children = _descendants(proc.pid)
        assert children, "the server runs in a child process"
        proc.send_signal(sig)  # to the command only, as `kill PID` does
        assert proc.wait(60) == 0
        deadline = time.monotonic() + 30  # the group was reaped by the command; allow the kernel a moment
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not [c for c in children if _alive(c)], "a server process survived the command"
        assert _port_free(port), f"port {port} still held"
    finally:
        for pid in [proc.pid, *_descendants(proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(10)
