"""The driver's end of a model server: its process, its CPU clock, its messages with deadlines; and
the sandbox cgroup's CPU counter."""
from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import subprocess
import sys
import time

from .shared import _send


class _Cpu:
    """CPU seconds of everything in the sandbox (its cgroup counter), or of one process."""

    PATHS = ("/run/cpu", "/sys/fs/cgroup/cpu.stat", "/sys/fs/cgroup/cpuacct/cpuacct.usage")

    def __init__(self):
        self.path, self.keyed = None, False
        for p in self.PATHS:
            try:
                text = open(p).read()
            except OSError:
                continue
            self.path, self.keyed = p, text.startswith("usage_usec") or "\nusage_usec" in text
            break
        self.source = "cgroup" if self.path else "process"

    def read(self) -> float | None:
        """The cgroup's CPU seconds; None without one (then the subject's own process clock
        counts, which misses its subprocesses)."""
        if self.path is None:
            return None
        # The counter holds a running task's time only up to its last accounting (a scheduler
        # tick: ms); yielding accounts the driver's own, so counter minus getrusage is exact
        os.sched_yield()
        with open(self.path) as f:
            text = f.read()
        if not self.keyed:
            return int(text.split()[0]) * 1e-9
        for line in text.splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) * 1e-6
        return 0.0


def _self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class _ChildGone(Exception):
    pass


class _Protocol(Exception):
    """The model server broke the protocol (garbage, oversized or malformed messages)."""


class _ReferenceFailed(Exception):
    """The problem's own code (inputs, reference model) raised while the model server ran."""


class _Server:
    """The driver's end of the model server: spawn, talk with deadlines, kill."""

    def __init__(self, env: dict, trusted: bool = False):
        self.shm_fd, self.size, self.mm = os.memfd_create("kernel-io"), 0, None  # this server's alone
        self.err = os.fdopen(os.memfd_create("child-stderr"), "w+b")
        shipped = os.path.abspath(sys.modules["__main__"].__file__)  # this package's one file (/box/prog)
        self.proc = subprocess.Popen([sys.executable, "-B", shipped, "--child",
                                      *(["--trusted"] if trusted else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     pass_fds=(self.shm_fd,), close_fds=True, env=env, cwd="/tmp")
        self.buf = b""
        clk = ctypes.c_int()
        err = ctypes.CDLL(None, use_errno=True).clock_getcpuclockid(self.proc.pid, ctypes.byref(clk))
        self.clock = None if err else clk.value

    def cpu(self) -> float:
        """CPU seconds of the server process, every thread (not its children)."""
        if self.clock is not None:
            try:
                return time.clock_gettime(self.clock)
            except OSError:
                pass
        try:  # fallback: the scheduler's run time of each thread
            base = f"/proc/{self.proc.pid}/task"
            return sum(int(open(f"{base}/{t}/schedstat").read().split()[0]) for t in os.listdir(base)) * 1e-9
        except (OSError, ValueError) as e:
            raise _ChildGone(f"its CPU clock cannot be read ({e})") from None

    def send(self, obj) -> None:
        try:
            _send(self.proc.stdin, obj)
        except (BrokenPipeError, OSError):
            raise _ChildGone(self.stderr_tail()) from None

    def recv(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise TimeoutError(f"no answer within {timeout:.3g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _ChildGone(self.stderr_tail())
                self.buf += chunk
                if len(self.buf) > 1 << 20:
                    raise _Protocol("oversized message")
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            msg = json.loads(line)
        except Exception as e:  # noqa: BLE001 - every byte here is the candidate's: ValueError, deep nesting...
            raise _Protocol(f"not JSON ({type(e).__name__})") from None
        if not isinstance(msg, dict):
            raise _Protocol("not a JSON object")
        return msg

    def stderr_tail(self) -> str:
        try:
            self.err.seek(0, os.SEEK_END)
            size = self.err.tell()
            self.err.seek(max(0, size - 3000))
            return self.err.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
