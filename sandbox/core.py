"""The sandbox API: compile once (cached), run against many tests, judge, measure.

    sb = Sandbox(backend="auto")
    result = sb.run(source, "cpp", [TestCase("1 2\\n", "3\\n")], Limits(time_s=2), repeats=3)
    for index, result in sb.run_many(jobs, workers=2): ...
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import math
import os
import queue
import secrets
import shutil
import signal as _signal
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from perfalign.common.concurrency import bounded_map

from . import calibration as _calibration
from . import cgroups, environments, seccomp, toolchains
from . import clock as _clock
from .backends import Backend, Mount, Slot, make_backend
from .backends.bwrap import GUEST_ENV
from .cache import CompileCache, UnitCache
from .checker import DEFAULT_TOLERANCE
from .compile import _INFRA_PROCESSES, Compiler, _check_flags
from .frames import MB, SandboxError, _FrameReader, _HostDeadline, _in_flight, _ProgramFault, _TestJudge
from .settings import SandboxSettings
from .toolchains import describe
from .types import CompileInfo, Job, Language, Limits, RunResult, TestCase, TestResult, Verdict, overall_verdict

# Headroom of the whole-sandbox memory cgroup over the program's limit (runner, tmpfs files).
_CGROUP_HEADROOM_MB = 64
# The JVM needs room beyond -Xmx (metaspace, code cache, thread stacks).
_JVM_OVERHEAD_MB = 192
_UID_BASE = 200000
# pids.max over RLIMIT_NPROC: the kernel releases a pids-cgroup charge about a second after a
# task is reaped, so back-to-back jobs in a slot would otherwise hit a stale count. The exact
# per-program bound is RLIMIT_NPROC (per user namespace, released at reap); pids.max stays the
# hard ceiling against a program that raises its soft limit.
_PIDS_HEADROOM = 128
# Host-side slack over the runner's own wall guard before the host stops the whole sandbox.
_HOST_SLACK_S = 10.0
_BOX_PREFIX = "perfalign-box-"
_TMPFS_ROOT = "/dev/shm"  # boxes go here when they fit (Sandbox._box_root), else to the temp dir
_TMPFS_SPARE = 256 * MB   # left free on it for everyone else
_SLOT_SERIAL = itertools.count()
# Sandboxes not closed by their owner still release their cgroups at exit.
_LIVE: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()
atexit.register(lambda: [sb.close() for sb in list(_LIVE)])


class Sandbox(Compiler):
    """Runs untrusted submissions through one backend with up to ``workers`` concurrent slots."""

    def __init__(self, backend: str = "auto", workers: int = 1, calibrate: bool = True,
                 cgroups_enabled: bool = True, cache_dir: Path | None = None, unit_cache: bool = True,
                 retries: int = SandboxSettings.retries) -> None:
        self.backend: Backend = make_backend(backend)
        self.workers = max(1, int(workers))
        self.retries = retries  # run_many's and run_job_retrying's default
        self.cache = CompileCache(cache_dir)
        # objects of trusted C++ units reused across programs (off: every build compiles every unit)
        self.units = UnitCache(cache_dir) if unit_cache else None
        self._calibrate = calibrate
        self._calibration: dict | None = None
        self._cal_lock = threading.Lock()
        # docker: the slot cgroup carries the job's limits, which the backend gives each container
        self._layout = cgroups.probe() if (cgroups_enabled and self.backend.name in ("bwrap", "docker")) else None
        self._slots: queue.Queue[Slot] = queue.Queue()
        self._all_slots: list[Slot] = []
        self._slot_lock = threading.Lock()
        self._closed = False
        _remove_stale_boxes()
        _LIVE.add(self)

    @classmethod
    def from_settings(cls, settings: SandboxSettings, workers: int | None = None, **kw) -> "Sandbox":
        """A sandbox on the [sandbox] settings, with ``workers`` slots (default: ``worker_count()``)."""
        return cls(backend=settings.backend, workers=workers or settings.worker_count(), retries=settings.retries,
                   **kw)

    def _box_root(self, job: Job) -> str | None:
        """Where a job's box (sources, its tests' input files) goes: the host's tmpfs when the
        runner reads host paths and the inputs fit with room to spare, else the temp dir. Each
        test's input is a file created before the runner starts: ~50 us on tmpfs, 80-1000 us on
        this host's ext4 /tmp (journal stalls), which was up to half a trivial test's cost."""
        if not self.backend.host_paths:
            return None
        try:
            st = os.statvfs(_TMPFS_ROOT)
        except OSError:
            return None
        need = sum(len(t.input) for t in job.tests) * 4 + _TMPFS_SPARE  # 4: UTF-8's bytes per char, at most
        return _TMPFS_ROOT if os.access(_TMPFS_ROOT, os.W_OK) and st.f_bavail * st.f_frsize >= need else None

    # ------------------------------------------------------------------ public API
    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def isolated(self) -> bool:
        return self.backend.isolated

    def run(self, source: str, language: Language | str | int, tests: Sequence[TestCase] | None = None,
            limits: Limits | None = None, repeats: int = 1, keep_output: bool = False,
            stop_on_failure: bool = False, tolerance: float = DEFAULT_TOLERANCE, clock: str = "cpu") -> RunResult:
        """Compile ``source`` (cached) and run it on each test ``repeats`` times.

        Without tests it runs once on empty stdin with no output check.
        """
        job = Job(source, language, tuple(tests) if tests else (TestCase(),), limits or Limits(),
                  repeats, keep_output, stop_on_failure, tolerance, clock=clock)
        return self.run_job(job)

    def run_job(self, job: Job) -> RunResult:
        return self._run_job(job, self.calibration() if self._calibrate else {})

    def _run_job(self, job: Job, calibration: dict, build_only: bool = False) -> RunResult | None:
        if job.repeats < 1:
            raise ValueError("repeats must be >= 1")
        _check_flags(tuple(job.compile_flags))
        lang = Language.parse(job.language)
        slot = self._acquire()
        try:
            return self._run_in_slot(job, lang, slot, calibration, build_only)
        finally:
            self._slots.put(slot)

    def run_many(self, jobs: Iterable[Job], workers: int | None = None,
                 retries: int | None = None) -> Iterator[tuple[int, RunResult]]:
        """Run jobs concurrently (threads: the work is in child processes); yields
        ``(index, result)`` in completion order.

        ``retries``: the one retry policy of perfalign. A job whose verdict is retryable
        (SANDBOX_ERROR: an infrastructure fault the program could not have caused) runs again,
        up to ``retries`` more times (default: the sandbox's, ``SandboxSettings.retries``); the
        last result is returned either way, with a ``retried:N`` flag.
        """
        yield from self._map(lambda job, cal: self.run_job_retrying(job, retries), jobs, workers, "sandbox")

    def build_many(self, jobs: Iterable[Job], workers: int | None = None
                   ) -> Iterator[tuple[int, RunResult | None]]:
        """Compile jobs concurrently without running them; yields ``(index, result)`` in
        completion order: ``None`` when the program is built (in the compile cache, where its run
        finds it: a threaded program's run, alone on the machine, then does not also compile
        alone), else the job's final result (compile error, unsupported language, sandbox error)."""
        yield from self._map(lambda job, cal: self._run_job(job, cal, build_only=True), jobs, workers, "build")

    def _map(self, fn, jobs: Iterable[Job], workers: int | None, name: str) -> Iterator[tuple[int, object]]:
        """``(index, fn(job, calibration))`` over up to ``workers`` threads, in completion order."""
        jobs = list(jobs)
        n = min(workers or self.workers, max(1, len(jobs)))
        self.workers = max(self.workers, n)
        cal = self.calibration() if self._calibrate else {}  # once, before the workers compete for the CPU
        for i, fut in bounded_map(lambda i: fn(jobs[i], cal), range(len(jobs)), n, max_in_flight=len(jobs),
                                  name=name):
            yield i, fut.result()

    def run_job_retrying(self, job: Job, retries: int | None = None) -> RunResult:
        retries = self.retries if retries is None else retries
        result = self.run_job(job)
        attempt = 0
        while result.verdict.retryable and attempt < retries:
            attempt += 1
            time.sleep(min(2.0, 0.2 * 2 ** attempt))
            result = self.run_job(job)
        if attempt:
            result.flags.append(f"retried:{attempt}")
        return result

    def calibration(self) -> dict:
        """CPU time of a fixed reference program on this host and backend (cached)."""
        with self._cal_lock:
            if self._calibration is None:
                # the reference program itself runs uncalibrated (no flag flipped on self)
                self._calibration = _calibration.measure_calibration(
                    self.name, lambda: self._run_job(_calibration.reference_job(), {}))
            return self._calibration

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for slot in self._all_slots:
            if slot.cgroup:
                slot.cgroup.remove()
        self.backend.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ slots
    def _acquire(self) -> Slot:
        with contextlib.suppress(queue.Empty):
            return self._slots.get_nowait()
        with self._slot_lock:
            if len(self._all_slots) < self.workers:
                # Unique within the process (several Sandboxes may live in one worker process)
                # and, through the pid, across processes.
                serial = next(_SLOT_SERIAL)
                cg = None
                if self._layout:
                    cg = cgroups.CgroupSlot.create(self._layout, f"{os.getpid()}-{serial}")
                # A uid per slot: RLIMIT_NPROC counts per uid, so slots must not share one.
                uid = _UID_BASE + (os.getpid() % 100000) * 1024 + serial % 1024
                slot = Slot(uid=uid, cgroup=cg)
                self._all_slots.append(slot)
                return slot
        return self._slots.get()

    # ------------------------------------------------------------------ compile + run
    def _run_in_slot(self, job: Job, lang: Language, slot: Slot, calibration: dict, build_only: bool = False
                     ) -> RunResult | None:
        def result(verdict: Verdict, compile_info: CompileInfo, tests=(), message: str = "") -> RunResult:
            return RunResult(verdict=verdict, backend=self.name, language=lang, isolated=self.isolated,
                             compile=compile_info, tests=list(tests), calibration=calibration,
                             environment=describe(lang),
                             message=message or ("" if self.isolated else "not isolated"))

        ok, why = toolchains.supported(lang)
        if not ok:
            return result(Verdict.UNSUPPORTED_LANGUAGE, CompileInfo(ok=False, message=why), message=why)
        with tempfile.TemporaryDirectory(prefix=f"{_BOX_PREFIX}{os.getpid()}-", dir=self._box_root(job)) as box:
            box = Path(box)
            os.chmod(box, 0o755)
            try:
                prog_dir, info = self._compile(job, lang, slot, box)
            except SandboxError as e:
                return result(Verdict.SANDBOX_ERROR, CompileInfo(ok=False, message=str(e)), message=str(e))
            if not info.ok:
                return result(Verdict.COMPILE_ERROR, info, message="compile error")
            if build_only:
                return None
            flags = []
            clock = job.clock
            if clock in _clock.DETERMINISTIC:
                why = _clock.fallback_reason(lang.value, job.toolchain, tuple(job.compile_flags), dict(job.env))
                if why is None and self.name not in _clock.BACKENDS:
                    why = f"backend_{self.name}"
                if why:  # never silently: the flag says which clock measured it and why
                    flags.append(f"clock_fallback:{why}")
                    clock = "cpu"
                elif missing := _clock.valgrind_missing():
                    return result(Verdict.SANDBOX_ERROR, info, message=missing)
            flags.append(f"clock:{clock}")
            if job.cpus is not None:
                flags.append(f"cpus:{job.cpus}" if slot.cgroup and slot.cgroup.set_cpus(job.cpus)
                             else "cpus_not_enforced")
            try:
                tests, how = self._execute(job, lang, prog_dir, slot, box, clock)
            except SandboxError as e:
                return result(Verdict.SANDBOX_ERROR, info, message=str(e))
            finally:
                if slot.cgroup and job.cpus is not None:
                    slot.cgroup.set_cpus(None)
                _unlock(box / "in")
        res = result(overall_verdict(tests), info, tests)
        res.flags = how + flags + sorted({f for t in tests for f in t.flags})  # "fast_repeat": see TestResult
        return res


    def _execute(self, job: Job, lang: Language, prog_dir: Path, slot: Slot, box: Path, clock: str = "cpu"
                 ) -> tuple[list[TestResult], list[str]]:
        # under valgrind: time limits scaled by its slowdown, its own memory added
        lim = _clock.scaled_limits(job.limits, clock) if clock in _clock.DETERMINISTIC else job.limits
        # Each input under an unguessable name in a directory nobody in the sandbox can list:
        # the program gets its own test's input (an open fd) and cannot find the others.
        inputs = box / "in"
        inputs.mkdir(mode=0o755)
        names = []
        for t in job.tests:
            name = secrets.token_hex(16)
            try:  # a full disk or tmpfs is the host's fault, never the program's: retryable
                fd = os.open(inputs / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
                try:
                    os.fchmod(fd, 0o644)  # whatever the umask: the sandbox's uid reads it
                    data = memoryview(t.input.encode("utf-8", "surrogateescape"))
                    while data:
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)
            except OSError as e:
                raise SandboxError(f"cannot write the tests' inputs under {box}: {e}") from e
            names.append(name)
        os.chmod(inputs, 0o111)
        program = toolchains.run_program(lang, job.source, lim.memory_mb, job.toolchain)
        use_as = slot.cgroup is None and not program.java  # RLIMIT_AS breaks the JVM
        rl = _runner_limits(lim, use_as)
        # + the judge environment (Python 3 libraries / Python 2 root), read-only
        env_mounts, env = environments.program_setup(lang, job.toolchain)
        mounts = [Mount("/box/prog", prog_dir), Mount("/box/in", inputs), *env_mounts]
        judges = [_TestJudge(t, job, lim, clock) for t in job.tests]
        clock_spec, clock_env = None, {}
        if clock in _clock.DETERMINISTIC:
            clock_spec = {"prefix": _clock.valgrind_prefix(clock), "max_log_bytes": _clock.MAX_LOG_BYTES,
                          "no_fork_bpf": seccomp.no_fork_filter().hex()}
            clock_env = {**_clock.PROGRAM_ENV, **_clock.valgrind_env()}
            mounts.append(Mount(clock_env["VALGRIND_LIB"], Path(clock_env["VALGRIND_LIB"])))  # the tool, read-only
        how: set[str] = set()

        def on_frame(head: dict, out: bytes, err: bytes) -> None:
            how.add(f"cpu:{head.get('cpu_source', 'rusage')}")
            judge = judges[head["test"]]
            judge.add(head, out, err)
            if judge.client_requests:
                how.add("valgrind_client_requests_ignored")

        try:
            self._launch(list(program.argv), [f"/box/in/{n}" for n in names], rl, mounts, slot, on_frame,
                         env={**env, **job.env, **clock_env},
                         repeats=job.repeats,
                         stop_on_failure=job.stop_on_failure,
                         memory_mb=lim.memory_mb + (_JVM_OVERHEAD_MB if program.java else 0), clock=clock_spec)
        except _ProgramFault as fault:
            # The runner could not finish because of what the program did (it exhausted the
            # sandbox's memory, or outlived the host's guard): the test in flight gets the verdict.
            judges[fault.test].fail(fault.verdict, fault.message)
        if clock_spec and not any(j.failed for j in judges):
            # the same build, natively, in the same job: the CPU time a count must not contradict
            # (sandbox.clock.count_contradicts_cpu), and the answer checked outside valgrind too
            try:
                self._launch(list(program.argv), [f"/box/in/{n}" for n in names], _runner_limits(job.limits, use_as),
                             [m for m in mounts if m.guest != clock_env["VALGRIND_LIB"]], slot,
                             lambda head, out, err: judges[head["test"]].add_native(head, out, err),
                             env={**env, **job.env, **_clock.PROGRAM_ENV},
                             repeats=max(job.repeats, _clock.NATIVE_REPEATS), stop_on_failure=job.stop_on_failure,
                             memory_mb=job.limits.memory_mb)
            except _ProgramFault as fault:
                judges[fault.test].fail(fault.verdict, f"run natively: {fault.message}")
        return [j.result() for j in judges if j.cpu or j.failed], sorted(how)  # cpu: one per frame

    def _launch(self, argv: list[str], tests: list[str], limits: dict, mounts: list[Mount], slot: Slot,
                on_frame, *, env: dict[str, str] | None = None, repeats: int, stop_on_failure: bool,
                memory_mb: int, clock: dict | None = None) -> None:
        """Run the runner; call ``on_frame(head, out, err)`` for each execution as it arrives."""
        if slot.cgroup:
            slot.cgroup.set_limits((memory_mb + _CGROUP_HEADROOM_MB) * MB, limits.get("nproc", 64) + _PIDS_HEADROOM)
        cpu_file = self.backend.guest_cpu_file(slot)
        spec = {
            "argv": argv, "cwd": "/tmp", "env": {**(env or {}), **GUEST_ENV}, "tests": tests, "repeats": repeats,
            "limits": limits, "stop_on_failure": stop_on_failure,
            "max_output_bytes": limits["fsize_bytes"] + 1,
            "oom_file": self.backend.guest_oom_file(slot),
            "cpu_file": cpu_file[0] if cpu_file else None, "cpu_format": cpu_file[1] if cpu_file else "ns",
            "output_dir": "/tmp", "clean_dirs": ["/tmp", "/dev/shm"],
            # Without cgroups the rlimits are the only memory/process bound: make them hard.
            "hard_limits": slot.cgroup is None,
            "tmp_bytes": limits["fsize_bytes"] * 2 + 64 * MB,
            "clock": clock,  # None: the cpu clock
        }
        per_run = float(limits["wall_s"]) + _HOST_SLACK_S
        oom_before = slot.cgroup.oom_kills() if slot.cgroup else 0
        handle = self.backend.launch(spec, mounts, slot)
        reader = _FrameReader(handle, max_out=limits["fsize_bytes"] + 1)
        last: tuple[int, int, bool] | None = None  # (test, repeat, failed) of the latest frame
        try:
            while True:
                try:
                    frame = reader.next(per_run)
                except _HostDeadline:
                    handle.kill()
                    raise _ProgramFault(_in_flight(last, repeats), Verdict.TIME_LIMIT_EXCEEDED,
                                        f"stopped by the host's wall-clock guard ({per_run:g} s)") from None
                if frame is None:
                    break
                head, out, err = frame
                if head.get("done"):
                    return
                if head.get("spawn_error"):  # reported by the runner itself, never by the program
                    raise SandboxError(f"sandbox runner could not start the program: {head['spawn_error']}")
                failed = bool(head["timed_out"] or head["cpu_exceeded"] or head["signal"] is not None
                              or head["exit_code"] != 0 or not head.get("clean", True))
                last = (head["test"], head["repeat"], failed)
                on_frame(head, out, err)
            code = handle.wait()
            oom = (slot.cgroup.oom_kills() - oom_before) if slot.cgroup else 0
            # The runner is PID 1 of its namespace: nothing inside can SIGKILL it, and the host
            # did not (a host deadline raised above). A SIGKILLed runner is the OOM killer's work
            # (seen directly in the slot cgroup for bwrap; docker reports only the exit status).
            if oom > 0 or code in (-_signal.SIGKILL, 128 + _signal.SIGKILL):
                raise _ProgramFault(_in_flight(last, repeats), Verdict.MEMORY_LIMIT_EXCEEDED,
                                    "ran out of memory (the sandbox's memory cgroup hit its limit)")
            raise SandboxError(f"sandbox runner failed (exit {code}): {handle.stderr_tail()[-1000:] or 'no output'}")
        finally:
            handle.close()


def _unlock(path: Path) -> None:
    """Undo the traverse-only mode so the box can be removed (by a non-root host too)."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o755)


def _remove_stale_boxes() -> None:
    """Box directories of processes that died without cleaning up (kill -9)."""
    for d in itertools.chain.from_iterable(Path(root).glob(f"{_BOX_PREFIX}*")
                                           for root in (tempfile.gettempdir(), _TMPFS_ROOT)):
        pid = d.name[len(_BOX_PREFIX):].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _unlock(d / "in")
            shutil.rmtree(d, ignore_errors=True)


def _runner_limits(lim: Limits, use_as: bool) -> dict:
    return {
        "time_s": lim.time_s,
        "wall_s": lim.wall_guard,
        "cpu_s": math.ceil(lim.time_s) + 1,
        "as_bytes": (lim.memory_mb + _CGROUP_HEADROOM_MB) * MB if use_as else None,
        "fsize_bytes": lim.output_mb * MB,
        "nproc": lim.processes + _INFRA_PROCESSES,
        "stack_bytes": lim.memory_mb * MB,
        "nofile": 256,
    }


