"""One execution of the program: started, waited for, killed and reaped, measured, its output read."""
import os
import resource
import select
import time

from .counters import _cpu, _read_counter
from .reaping import _empty_dir, _kill_everything_else
from .spawn import _aim_oom_killer, _spawn
from .system import O_TMPFILE, WALL, signal


class _LogReader:
    """The runner's end of valgrind's log socket, drained while the program runs (bounded)."""

    def __init__(self, sock, cap):
        self.sock, self.cap = sock, cap
        self.data = bytearray()
        self.eof = False
        self.overflow = False
        sock.setblocking(False)

    def fileno(self):
        return self.sock.fileno()

    def drain(self):
        """What has arrived (non-blocking); under ``finish``'s timeout, all of it."""
        while not self.eof:
            try:
                chunk = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the socket's error, or finish's timeout
                chunk = b""
            if not chunk:
                self.eof = True
                return
            if len(self.data) + len(chunk) > self.cap:
                self.overflow = True
                chunk = chunk[:max(0, self.cap - len(self.data))]
            self.data += chunk

    def finish(self):
        """Everything left (every writer is dead by now: EOF comes)."""
        self.sock.settimeout(5.0)  # blocking, at most 5 s a read
        self.drain()
        return bytes(self.data).decode("utf-8", "replace")


def _wait(job, pid, counter, cpu_base, self_base, log=None, frames=None):
    """Wait for the program; stop it at the CPU limit or the wall-clock guard.

    Returns (timed_out, cpu_exceeded). The CPU check covers every process of the program,
    so a multi-threaded or multi-process program is stopped near the limit, not at the guard.
    """
    lim = job["limits"]
    guard = float(lim["wall_s"])
    cpu_limit = lim.get("time_s")
    t0 = time.monotonic()
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        draining = [log] if log is not None else []
        if draining:
            poller.register(log.fileno(), select.POLLIN)

        def exited(timeout_s):
            """Whether the program exited within ``timeout_s`` (draining valgrind's log meanwhile)."""
            end = time.monotonic() + timeout_s
            while True:
                events = poller.poll(max(0.0, end - time.monotonic()) * 1000.0)
                if any(fd == pidfd for fd, _ in events):
                    return True
                if not events:
                    return False
                if draining:
                    draining[0].drain()
                    if draining[0].eof:
                        poller.unregister(draining.pop().fileno())
                elif time.monotonic() >= end:
                    return False

        first = min(guard, float(cpu_limit)) if (cpu_limit and counter.path) else guard
        if frames is not None and frames.parts:  # a longer run: the host hears of the tests before it
            if exited(min(first, frames.IDLE_S)):
                return False, False
            frames.flush()
        if exited(first):
            return False, False
        while True:
            now = time.monotonic() - t0
            if now >= guard:
                return True, False
            used = counter.read() - cpu_base - (_cpu() - self_base) if counter.path else 0.0
            if cpu_limit and used > float(cpu_limit):
                return False, True
            if exited(min(0.02, guard - now)):
                return False, False
    finally:
        os.close(pidfd)


def _digest(data):
    """A cryptographic digest: a repeat whose output matches the first one's is not sent again."""
    try:
        from _blake2 import blake2b  # no OpenSSL to load (hashlib's import costs ~4 ms)
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    return blake2b(data, digest_size=32).digest()


def _run_once(job, index, repeat, counter, first_digest, frames=None):
    scratch = job.get("output_dir") or "/tmp"
    fd_in = os.open(job["tests"][index] or os.devnull, os.O_RDONLY)
    fd_out = os.open(scratch, O_TMPFILE | os.O_RDWR, 0o600)
    fd_err = os.open(scratch, O_TMPFILE | os.O_RDWR, 0o600)
    try:
        oom_before = _read_counter(job.get("oom_file"), "oom_kill")
        log = None
        clock = job.get("clock")
        if clock:
            import socket
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            log = _LogReader(ours, int(clock["max_log_bytes"]))
        start = {}

        def at_start():  # the clocks' zero: nothing of the program has run yet, nothing else will
            start.update(cg0=counter.read(), self0=_cpu(), child0=_cpu(resource.RUSAGE_CHILDREN), t0=time.monotonic())
        try:
            pid, spawn_error = _spawn(job, fd_in, fd_out, fd_err, theirs.fileno() if clock else None, at_start)
        finally:
            if clock:
                theirs.close()  # only the program holds the writing end: EOF once it is gone
        if not start:
            at_start()
        cg0, self0, child0, t0 = start["cg0"], start["self0"], start["child0"], start["t0"]
        if pid is None:
            head = {"test": index, "repeat": repeat, "spawn_error": spawn_error, "timed_out": False,
                    "cpu_exceeded": False, "exit_code": None, "signal": None, "cpu_s": 0.0, "wall_s": 0.0,
                    "max_rss_kb": 0, "oom_kills": 0, "out_size": 0, "same_as_first": False, "clean": True}
            return head, None, b"", b""
        _aim_oom_killer(pid)
        timed_out, cpu_exceeded = _wait(job, pid, counter, cg0 if cg0 is not None else 0.0, self0, log, frames)
        if timed_out or cpu_exceeded:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        _, status, ru = os.wait4(pid, WALL)
        wall = time.monotonic() - t0
        # Under a deterministic clock a process that outlives the program would go uncounted. As
        # PID 1: any other process of the namespace still alive (zombies included).
        outlived = bool(clock) and os.getpid() == 1 and any(n.isdigit() and n != "1" for n in os.listdir("/proc"))
        _kill_everything_else()
        log_text = log.finish() if log else ""
        if cg0 is not None:
            # everything in the cgroup, minus what this runner itself used meanwhile
            cpu = max(0.0, (counter.read() - cg0) - (_cpu() - self0))
            source = "cgroup"
        else:  # every process was reaped by us or by a reaped ancestor (dodgeable: SIGCHLD=SIG_IGN)
            cpu = _cpu(resource.RUSAGE_CHILDREN) - child0
            source = "rusage"
        clean = all(_empty_dir(d) for d in job.get("clean_dirs", ()))
        out_size = os.fstat(fd_out).st_size  # the first max_output_bytes of the unnamed output file
        out = os.pread(fd_out, min(out_size, int(job["max_output_bytes"])), 0) if out_size else b""
        digest = _digest(out) if int(job.get("repeats", 1)) > 1 else None
        err = os.pread(fd_err, int(job.get("max_stderr_bytes", 65536)), 0)
    finally:
        for fd in (fd_in, fd_out, fd_err):
            os.close(fd)
        if log:
            log.sock.close()
    same = first_digest is not None and digest == first_digest
    head = {
        "test": index,
        "repeat": repeat,
        "spawn_error": None,
        "timed_out": timed_out,
        "cpu_exceeded": cpu_exceeded,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": cpu,
        "cpu_source": source,
        "wall_s": wall,
        "max_rss_kb": ru.ru_maxrss,
        "oom_kills": _read_counter(job.get("oom_file"), "oom_kill") - oom_before,
        "out_size": out_size,
        "same_as_first": same,
        "clean": clean,
    }
    if clock:
        # valgrind's own lines only ("**pid**" lines are the program's VALGRIND_PRINTF)
        head["clock_log"] = "\n".join(ln for ln in log_text.splitlines() if ln.startswith("=="))[-65536:]
        head["clock_pid"] = pid
        head["clock_problem"] = ("valgrind's log exceeded %d bytes" % clock["max_log_bytes"] if log.overflow else
                                 "a process outlived the program (its instructions would go uncounted)"
                                 if outlived else None)
    # The first repeat's output, and any repeat's that differs from it, go to the host to be judged.
    return head, digest, (b"" if same else out), err
