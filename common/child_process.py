"""Run one function call in a fresh Python process, as if it ran here: its log records and
``common.progress`` reports are re-emitted in the calling thread (so the stage log, the terminal's
bars and the Prefect run log of the calling task see them), its return value comes back and its
exception is raised here. For independent CPU-bound work (two training stages on two cores) that
threads cannot overlap under the GIL.

The child speaks pickled messages over a private pipe (``multiprocessing.connection``); its
stdout is pointed at its stderr, so a library's print cannot corrupt the channel. It dies with
the calling thread (PR_SET_PDEATHSIG) and is terminated if the caller is interrupted."""
from __future__ import annotations

import collections
import ctypes
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from typing import Any, Callable

log = logging.getLogger("perfalign.child")
try:  # looked up here: the child between fork and exec must not load libraries (other threads' locks)
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None


class ChildDied(RuntimeError):
    """The child died without a result (killed, out of memory, an interpreter crash)."""


def die_with_parent() -> None:
    """For ``preexec_fn``: the child gets SIGTERM when the thread that started it ends."""
    if _PRCTL is not None:
        _PRCTL(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def call_in_child(fn: Callable[..., Any], *args: Any, stop: threading.Event | None = None, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a child interpreter (``fn`` importable by name, arguments
    picklable); returns its value or raises its exception (or ChildDied with the end of
    its stderr when it died without one). Setting ``stop`` terminates the child (Cancelled)."""
    # the path first: what imports here imports there
    job = pickle.dumps(list(sys.path)) + pickle.dumps((fn, args, kwargs))
    r, w = os.pipe()
    env = {**os.environ, "PERFALIGN_CHILD_FD": str(w)}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "perfalign.common.child_process"], env=env,
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,),
                                preexec_fn=die_with_parent)
    finally:
        os.close(w)
    conn = Connection(r)
    tail: collections.deque[str] = collections.deque(maxlen=5)
    drain = threading.Thread(target=_drain, args=(proc.stderr, tail), daemon=True, name="child-stderr")
    drain.start()
    try:
        proc.stdin.write(job)
        proc.stdin.close()
        return _relay(conn, proc, stop, drain, tail)
    finally:
        conn.close()
        if proc.poll() is None:  # interrupted here: the child must not outlive the call
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stderr.close()


class Cancelled(RuntimeError):
    """The caller set ``stop``: the child was terminated."""


def _drain(stream, tail: "collections.deque[str]") -> None:
    """The child's stderr (library prints and warnings) into the log at INFO: the stage's log
    file and run log keep it, the terminal does not; the last lines explain a crash."""
    for raw in stream:
        line = raw.decode(errors="replace").rstrip()
        if line:
            tail.append(line)
            log.info("%s", line)


def _relay(conn: Connection, proc: subprocess.Popen, stop: threading.Event | None,
           drain: threading.Thread, tail: "collections.deque[str]") -> Any:
    from .progress import report

    while True:
        if stop is not None and not conn.poll(0.5):
            if stop.is_set():
                raise Cancelled("stopped: another part of the run failed")
            continue
        try:
            kind, payload = conn.recv()
        except EOFError:
            rc = proc.wait()
            drain.join(5)
            raise ChildDied(f"child process exited with {rc} and no result" + (": " + " | ".join(tail) if tail else ""))
        if kind == "log":
            logging.getLogger(payload["name"]).handle(logging.makeLogRecord(payload))
        elif kind == "progress":
            report(*payload)
        elif kind == "result":
            proc.wait()
            return payload
        elif kind == "error":
            proc.wait()
            exc, tb = payload
            log.debug("the child's traceback:\n%s", tb)
            raise exc


class _SendRecords(logging.Handler):
    def __init__(self, conn: Connection) -> None:
        super().__init__(logging.INFO)
        self.conn = conn

    def emit(self, record: logging.LogRecord) -> None:
        try:
            d = dict(record.__dict__)
            d["msg"], d["args"] = record.getMessage(), None
            if record.exc_info:
                d["msg"] += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            d["exc_info"] = d["exc_text"] = None
            self.conn.send(("log", {k: v for k, v in d.items() if _picklable(v)}))
        except Exception:
            self.handleError(record)


def _picklable(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool, tuple))


def _child_main() -> None:
    fd = int(os.environ.pop("PERFALIGN_CHILD_FD"))
    os.dup2(2, 1)  # prints go to stderr, never into the channel
    conn = Connection(fd)
    from .progress import subscribe

    root = logging.getLogger()
    root.handlers[:] = [_SendRecords(conn)]
    root.setLevel(logging.INFO)
    subscribe(lambda what, done, total: conn.send(("progress", (what, done, total))))
    sys.path[:] = pickle.load(sys.stdin.buffer)
    fn, args, kwargs = pickle.load(sys.stdin.buffer)
    try:
        out = ("result", fn(*args, **kwargs))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the caller, raised there
        tb = traceback.format_exc()
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:
            e = RuntimeError(f"{type(e).__name__}: {e}")
        out = ("error", (e, tb))
    conn.send(out)
    conn.close()


if __name__ == "__main__":
    _child_main()
