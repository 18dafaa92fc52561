"""The runner's frames: read as they arrive, each test judged from them, and whose fault a run
that stopped is (``_ProgramFault``: the program's; ``SandboxError``: the sandbox's)."""
from __future__ import annotations

import json
import select
import signal as _signal
import time

from . import clock as _clock
from .backends.base import RunnerHandle
from .checker import outputs_match
from .types import Job, Limits, TestCase, TestResult, Verdict

MB = 1024 * 1024
_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "java.lang.OutOfMemoryError", "Cannot allocate memory")


class SandboxError(RuntimeError):
    """Infrastructure fault (not the program's): reported as SANDBOX_ERROR, retryable."""


class _ProgramFault(Exception):
    def __init__(self, test: int, verdict: Verdict, message: str) -> None:
        super().__init__(message)
        self.test, self.verdict, self.message = test, verdict, message


class _HostDeadline(Exception):
    pass


def _in_flight(last: tuple[int, int, bool] | None, repeats: int) -> int:
    """The test the runner was on when it stopped reporting."""
    if last is None:
        return 0
    test, repeat, failed = last
    return test if (repeat + 1 < repeats and not failed) else test + 1


class _FrameReader:
    """Reads the runner's frames one at a time as they arrive: bounded memory, host deadlines."""

    def __init__(self, handle: RunnerHandle, max_out: int, max_err: int = 1 << 20) -> None:
        self.handle, self.max_out, self.max_err = handle, max_out, max_err
        self.buf = bytearray()
        self.eof = False

    def _wait(self, deadline: float) -> None:
        """Until the runner's stream is readable; raises _HostDeadline."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.handle.fileno()], [], [], left)[0]:
            raise _HostDeadline()

    def _fill(self, deadline: float) -> bool:
        """Append the runner's next chunk to the buffer (False at EOF); raises _HostDeadline."""
        if self.eof:
            return False
        self._wait(deadline)
        chunk = self.handle.read(1 << 20)
        self.eof = not chunk
        self.buf += chunk
        return bool(chunk)

    def _take(self, n: int, deadline: float) -> bytearray | None:
        # One buffer of the exact size, filled in place: no chunk lists, joins or copies, so
        # the host holds one output at a time whatever the allocator does with small blocks
        # (chunked reads kept ~1.2 GB resident over 10 x 60 MB outputs on a many-core host).
        data = bytearray(n)
        view = memoryview(data)
        have = min(n, len(self.buf))
        view[:have] = self.buf[:have]
        del self.buf[:have]
        while have < n:
            if self.eof:
                return None
            self._wait(deadline)
            got = self.handle.readinto(view[have:])
            if not got:
                self.eof = True
                return None
            have += got
        view.release()
        return data

    def next(self, timeout: float) -> tuple[dict, bytes, bytes] | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if len(self.buf) > 1 << 16 or not self._fill(deadline):
                return None
        nl = self.buf.index(b"\n")
        try:
            head = json.loads(bytes(self.buf[:nl]))
        except ValueError:
            return None
        self.buf = self.buf[nl + 1:]
        if head.get("done"):
            return head, b"", b""
        out_len, err_len = int(head.get("out_len", 0)), int(head.get("err_len", 0))
        if out_len > self.max_out or err_len > self.max_err:
            return None
        out = self._take(out_len, deadline)
        err = self._take(err_len, deadline)
        if out is None or err is None:
            return None
        return head, out, err


class _TestJudge:
    """Verdict and measurements of one test, built frame by frame (every repeat is judged)."""

    def __init__(self, test: TestCase, job: Job, lim: Limits, clock: str = "cpu") -> None:
        self.test, self.job, self.lim, self.clock = test, job, lim, clock
        self.instructions: list[int] = []
        self.cycles: list[float] = []
        self.misses: tuple[int, int] | None = None
        self.client_requests = 0  # valgrind client requests the program attempted (dropped by perfcount)
        self.native_cpu: list[float] = []  # the same build run natively beside the count
        self.cpu: list[float] = []
        self.wall: list[float] = []
        self.rss: list[int] = []
        self.verdict, self.message = Verdict.OK, ""
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.output: str | None = None
        self.failed = False

    def fail(self, verdict: Verdict, message: str) -> None:
        if self.verdict is Verdict.OK:
            self.verdict, self.message = verdict, message
        self.failed = True

    def add(self, head: dict, out: bytes, err: bytes) -> None:
        self.cpu.append(head["cpu_s"])
        self.wall.append(head["wall_s"])
        self.rss.append(head["max_rss_kb"])
        self.exit_code, self.signal = head["exit_code"], head["signal"]
        if self.verdict is not Verdict.OK:
            return
        verdict, message = _classify(head, err.decode("utf-8", "replace"), self.lim)
        if self.clock in _clock.DETERMINISTIC:
            counts, why = _clock.parse_log(head.get("clock_log", ""), int(head.get("clock_pid") or -1))
            why = head.get("clock_problem") or why
            if why and verdict in (Verdict.OK, Verdict.RUNTIME_ERROR):  # perfcount's reason over its exit code
                verdict, message = Verdict.RUNTIME_ERROR, f"not countable under the {self.clock} clock: {why}"
            elif counts is not None and not why:
                self.instructions.append(counts.instructions)
                self.client_requests = max(self.client_requests, counts.client_requests)
                if self.clock == "cycles":
                    self.cycles.append(_clock.cycles(counts))
                    self.misses = self.misses or (counts.l1_misses, counts.ll_misses)
        if verdict is Verdict.OK and not head.get("same_as_first"):
            text = out.decode("utf-8", "replace")
            if head["repeat"] == 0 and self.job.keep_output:
                self.output = text
            if self.test.expected is not None and not outputs_match(self.test.expected, text, self.job.tolerance):
                verdict = Verdict.WRONG_ANSWER
                message = "output differs from the expected output" + (
                    f" (repeat {head['repeat']}; earlier repeats were correct)" if head["repeat"] else "")
        if verdict is not Verdict.OK:
            self.fail(verdict, message)

    def add_native(self, head: dict, out: bytes, err: bytes) -> None:
        """A native run of a counted program: its CPU time, and the same verdict and answer checks."""
        if self.verdict is not Verdict.OK:
            return
        verdict, message = _classify(head, err.decode("utf-8", "replace"), self.job.limits)
        if verdict is Verdict.OK and not head.get("same_as_first") and self.test.expected is not None and \
                not outputs_match(self.test.expected, out.decode("utf-8", "replace"), self.job.tolerance):
            verdict, message = Verdict.WRONG_ANSWER, "output differs from the expected output"
        if verdict is not Verdict.OK:
            self.fail(verdict, f"run natively beside the count: {message}")
        else:
            self.native_cpu.append(head["cpu_s"])

    def result(self) -> TestResult:
        return TestResult.from_repeats(self.verdict, self.cpu, self.wall, self.rss, self.instructions, self.cycles,
                                       l1_misses=self.misses[0] if self.misses else None,
                                       ll_misses=self.misses[1] if self.misses else None, exit_code=self.exit_code,
                                       signal=self.signal, message=self.message, output=self.output,
                                       native_cpu_times_s=self.native_cpu)


def _classify(head: dict, stderr: str, lim: Limits) -> tuple[Verdict, str]:
    """Verdict of one execution from the runner's report (output checked separately).

    Time is CPU time over every process and thread; the wall clock is only a guard.
    """
    sig, code = head["signal"], head["exit_code"]
    if head["timed_out"]:
        return Verdict.TIME_LIMIT_EXCEEDED, f"exceeded the {lim.wall_guard:g} s wall-clock guard"
    if head.get("cpu_exceeded") or head["cpu_s"] > lim.time_s or sig == _signal.SIGXCPU:
        return Verdict.TIME_LIMIT_EXCEEDED, f"exceeded the {lim.time_s:g} s CPU time limit"
    # A stack overflow faults at RLIMIT_STACK (= the memory limit) with RSS near the limit:
    # that is the program's crash, not a memory-limit verdict.
    if head.get("oom_kills", 0) > 0 or (head["max_rss_kb"] > lim.memory_mb * 1024 and sig != _signal.SIGSEGV):
        return Verdict.MEMORY_LIMIT_EXCEEDED, f"exceeded the {lim.memory_mb} MB memory limit"
    if sig == _signal.SIGXFSZ or head.get("out_size", 0) > lim.output_mb * MB:
        return Verdict.OUTPUT_LIMIT_EXCEEDED, f"wrote more than {lim.output_mb} MB"
    if sig is not None or code != 0:
        if any(m in stderr for m in _MEMORY_MARKERS):
            return Verdict.MEMORY_LIMIT_EXCEEDED, f"ran out of memory (limit {lim.memory_mb} MB)"
        what = f"killed by signal {sig} ({_signal_name(sig)})" if sig is not None else f"exit code {code}"
        return Verdict.RUNTIME_ERROR, (what + ("\n" + stderr[-2000:] if stderr.strip() else "")).strip()
    if not head.get("clean", True):
        return Verdict.RUNTIME_ERROR, "left files behind that the sandbox could not remove"
    return Verdict.OK, ""


def _signal_name(sig: int) -> str:
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return "unknown"
