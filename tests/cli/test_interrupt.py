"""Ctrl-C on `perfalign perf build ... | tee log` in a terminal ends the flow run Crashed (with
stdout on a pipe too, not "Running" in the UI for good), and
the terminal shows one line saying how to resume, not Prefect's crash banners.

Without PREFECT_API_URL, Prefect's temporary server was a child in the command's process group
writing to its stdout: Ctrl-C (and SIGPIPE from the dead `tee`) took it down before the command
could report the crash. The command now runs its own local server (flows.server.local_api)."""
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _read(fd: int, buf: list[bytes], wait: float) -> bool:
    r, _, _ = select.select([fd], [], [], wait)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        buf.append(data)
    return True


def _measuring(raw: bytes) -> bool:
    """The build's bar shows at least one measured submission ("submissions measured ... 7/22")."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", raw.decode(errors="replace"))
    return any(int(m.group(1)) > 0 for m in re.finditer(r"submissions measured\D*?(\d+)/\d+", text))


def test_ctrl_c_with_stdout_on_a_pipe_ends_the_run_crashed_with_one_line(tmp_path):
    out = tmp_path / "demo" / "codecontests_perf"
    # the whole bundled sample, every test (the embedded profile caps them at 5), 5 repeats: minutes
    # of work, so it cannot finish in the 2 s between its first measured submission and the Ctrl-C
    cmd = (f"{sys.executable} -m perfalign.cli perf build --out {out} --repeats 5 "
           f"--set perf.max_tests=null | tee {tmp_path / 'log'}")
    # no session server, no other Prefect home: this command starts its own local server
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PERFALIGN_HOME=str(tmp_path / "home"), COLUMNS="100")
    pid, fd = pty.fork()
    if pid == 0:  # the shell of a terminal: the pipeline is its foreground process group
        # with a terminal's signal dispositions: a suite started in the background (`nohup ... &`)
        # hands SIG_IGN for SIGINT down to every child, and a Python started so never sees Ctrl-C
        for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.chdir(ROOT)
        os.execve("/bin/bash", ["bash", "-c", cmd], env)
    buf: list[bytes] = []
    try:
        deadline = time.monotonic() + 600
        while not _measuring(b"".join(buf)):  # the flow runs: its bar counts measured submissions
            assert _read(fd, buf, 1.0), b"".join(buf).decode(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the build did not start"
        t = time.monotonic()
        while time.monotonic() - t < 2:
            _read(fd, buf, 0.5)
        os.write(fd, b"\x03")  # Ctrl-C: SIGINT to the foreground process group (perfalign and tee)
        deadline = time.monotonic() + 300
        while _read(fd, buf, 1.0) and time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)  # the shell's group: the build and tee too, if still there
        except ProcessLookupError:
            pass
    text = b"".join(buf).decode(errors="replace")
    db = tmp_path / "home" / "prefect" / "prefect.db"
    with sqlite3.connect(db) as c:
        runs = c.execute("select name, state_type from flow_run").fetchall()
    assert runs == [("demo/codecontests_perf", "CRASHED")], (runs, text[-3000:])
    assert "Crash detected" not in text, text[-3000:]  # before: 2-6 red banners; the UI's run log keeps them
    assert text.count("interrupted; rerun the same command to resume") == 1, text[-3000:]
    assert "Traceback" not in text


def test_kill_9_then_status_marks_the_flow_run_crashed(tmp_path):
    """After kill -9 nothing reports the crash: the flow run stayed Running in the UI for good.
    `perfalign status` finds it in the local database (owner tag, process gone) and marks it."""
    out = tmp_path / "runs" / "demo" / "codecontests_perf"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PERFALIGN_HOME=str(tmp_path / "home"), COLUMNS="200")
    cli = [sys.executable, "-m", "perfalign.cli"]
    p = subprocess.Popen([*cli, "perf", "build", "--out", str(out), "--repeats", "5", "--set", "perf.max_tests=null"],
                         cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = tmp_path / "home" / "prefect" / "prefect.db"
    try:
        deadline = time.monotonic() + 600
        while _states(db) != [("demo/codecontests_perf", "RUNNING")]:
            assert p.poll() is None and time.monotonic() < deadline, _states(db)
            time.sleep(1)
    finally:
        p.kill()  # SIGKILL: no handler runs; its local server dies with it
        p.wait()
    time.sleep(2)
    assert _states(db) == [("demo/codecontests_perf", "RUNNING")]  # what the UI showed for good
    st = subprocess.run([*cli, "status", "--root", str(tmp_path / "runs")], cwd=ROOT, env=env, capture_output=True,
                        text=True, timeout=600)
    assert st.returncode == 0, st.stderr[-2000:]
    assert _states(db) == [("demo/codecontests_perf", "CRASHED")], st.stdout + st.stderr
    assert "1 flow run(s) of processes that are gone marked Crashed" in st.stdout


def _states(db):
    try:
        with sqlite3.connect(db) as c:
            return c.execute("select name, state_type from flow_run").fetchall()
    except sqlite3.Error:
        return []
