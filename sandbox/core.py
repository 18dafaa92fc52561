"""The sandbox API: compile once (cached), run against many tests, judge, measure.

    sb = Sandbox(backend="auto")
    result = sb.run(source, "cpp", [TestCase("1 2\\n", "3\\n")], Limits(time_s=2), repeats=3)
    for index, result in sb.run_many(jobs, workers=2): ...
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import math
import os
import queue
import re
import secrets
import select
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
from . import cgroups, environments, languages, seccomp
from . import clock as _clock
from .backends import Backend, Mount, Slot, make_backend
from .backends.base import RunnerHandle
from .backends.bwrap import GUEST_ENV
from .cache import CompileCache, UnitCache, compile_key, pch_dir, unit_key
from .checker import DEFAULT_TOLERANCE, outputs_match
from .languages import describe
from .settings import SandboxSettings
from .types import CompileInfo, Job, Language, Limits, RunResult, TestCase, TestResult, Verdict, overall_verdict

MB = 1024 * 1024
# Headroom of the whole-sandbox memory cgroup over the program's limit (runner, tmpfs files).
_CGROUP_HEADROOM_MB = 64
# The JVM needs room beyond -Xmx (metaspace, code cache, thread stacks).
_JVM_OVERHEAD_MB = 192
# Largest compiled program (all files of a compile-cache entry) we keep.
MAX_PROGRAM_MB = 64
_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "java.lang.OutOfMemoryError", "Cannot allocate memory")
_UID_BASE = 200000
# Processes of the slot's uid that are not the program's: the runner (bwrap's outer process
# lives in the parent user namespace and is not counted against the program's RLIMIT_NPROC).
_INFRA_PROCESSES = 1
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
_SOURCE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.(cpp|cc|cxx|h|hpp)$")
_SLOT_SERIAL = itertools.count()
# Sandboxes not closed by their owner still release their cgroups at exit.
_LIVE: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()
atexit.register(lambda: [sb.close() for sb in list(_LIVE)])


class SandboxError(RuntimeError):
    """Infrastructure fault (not the program's): reported as SANDBOX_ERROR, retryable."""


class Sandbox:
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

        ok, why = languages.supported(lang)
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

    def _compile(self, job: Job, lang: Language, slot: Slot, box: Path) -> tuple[Path, CompileInfo]:
        source, limits, extra_flags = job.source, job.limits, tuple(job.compile_flags)
        extra_sources, exports = dict(job.extra_sources), dict(job.exports)
        if extra_sources and lang is not Language.CPP:
            raise ValueError("extra_sources are for C++ jobs only")
        if set(exports) - set(extra_sources):
            raise ValueError(f"exports name units that are not extra sources: "
                             f"{sorted(set(exports) - set(extra_sources))}")
        for name in extra_sources:
            if not _SOURCE_NAME.match(name) or name == "main.cpp":
                raise ValueError(f"extra source name {name!r} is not allowed (plain file names ending in "
                                 ".cpp/.cc/.cxx/.h/.hpp, not main.cpp)")
        # The PCH only matches the default flags; with extra flags g++ reads the header instead.
        pch = pch_dir() if lang is Language.CPP and not extra_flags else None
        argv = languages.compile_argv(lang, source, "/pch" if pch else None, extra_flags, job.toolchain)
        units = [f"/box/src/{n}" for n in sorted(extra_sources) if not n.endswith((".h", ".hpp"))]
        plain, link_units = argv, None
        if argv is not None and exports:  # some units may export only the functions named
            link_units = [("/box/src/main.cpp", None)] + [
                (u, tuple(exports[u.rsplit("/", 1)[1]]) if u.rsplit("/", 1)[1] in exports else None) for u in units]
            argv = languages.private_link_argv(argv, link_units)
        elif argv is not None and units:
            at = argv.index("/box/src/main.cpp") + 1
            argv = argv[:at] + units + argv[at:]
        if argv is None:  # interpreted: the "program" is the source file
            prog = box / "prog"
            prog.mkdir(mode=0o755)
            (prog / "main.py").write_text(source, encoding="utf-8", errors="surrogateescape")
            os.chmod(prog / "main.py", 0o644)
            return prog, CompileInfo(ok=True)
        key = compile_key(lang, tuple(argv), source + "".join(
            f"\0{n}\0{extra_sources[n]}" for n in sorted(extra_sources)))
        if hit := self.cache.get(key):
            return hit
        files = {languages.source_filename(lang, source): source, **extra_sources}
        out = self.cache.staging() / "out"
        mounts = _compiler_mounts(box / "src", files, out, slot, pch)
        lim = {"time_s": limits.compile_time_s, "wall_s": limits.compile_time_s,
               "cpu_s": math.ceil(limits.compile_time_s), "fsize_bytes": MAX_PROGRAM_MB * MB,
               "nproc": max(limits.processes, 64) + _INFRA_PROCESSES, "nofile": 1024}
        t0 = time.monotonic()
        if link_units is not None and self.units is not None:  # the trusted units' objects, compiled once (cache.py)
            prebuilt = self._trusted_objects(plain, link_units, {"main.cpp": source, **extra_sources},
                                             limits, lim, slot, box, pch)
            if prebuilt:
                mounts.append(Mount("/box/units", box / "units"))
                argv = languages.private_link_argv(plain, link_units, prebuilt)
        frames: list[tuple[dict, bytes, bytes]] = []
        try:
            self._launch(argv, ["/dev/null"], lim, mounts, slot, lambda *f: frames.append(f), repeats=1,
                         stop_on_failure=True, memory_mb=limits.compile_memory_mb)
            if not frames:
                raise SandboxError("the compiler did not run")
        except _ProgramFault as fault:  # e.g. a source that makes the compiler exhaust memory
            shutil.rmtree(out.parent, ignore_errors=True)
            return out, CompileInfo(ok=False, seconds=round(time.monotonic() - t0, 4), message=fault.message)
        except SandboxError:
            shutil.rmtree(out.parent, ignore_errors=True)  # nothing to cache from a failed sandbox
            raise
        seconds = time.monotonic() - t0
        head, _, err = frames[0]
        ok = (not head["timed_out"] and not head["cpu_exceeded"] and head["signal"] is None
              and head["exit_code"] == 0)
        message = err.decode("utf-8", "replace")[-8000:]
        if head["timed_out"] or head["cpu_exceeded"]:
            message = f"compilation exceeded {limits.compile_time_s:g} s\n" + message
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        if head["signal"] == _signal.SIGXFSZ or size > MAX_PROGRAM_MB * MB or "File size limit exceeded" in message:
            # e.g. `char big[300<<20] = {1};`: never let one program fill the cache
            ok, message = False, f"the compiled program exceeds the {MAX_PROGRAM_MB} MB cap\n" + message
            for p in out.iterdir():
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        for p in out.rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() or p.name == "prog" else 0o644)
        info = CompileInfo(ok=ok, seconds=round(seconds, 4), message=message.strip())
        final = self.cache.commit(key, out, info)
        shutil.rmtree(out.parent, ignore_errors=True)
        return final, info

    def _trusted_objects(self, argv: list[str], units: list[tuple[str, tuple[str, ...] | None]],
                         texts: dict[str, str], limits: Limits, lim: dict, slot: Slot, box: Path,
                         pch: Path | None) -> dict[str, str]:
        """Guest paths of read-only objects (under /box/units) for the trusted units (no exports)
        of a private-link build: from the unit cache, or compiled now in a sandbox run that holds
        only the trusted files (no candidate byte) and stored by the host. {} when none is usable:
        the build then compiles every unit itself, as without the cache."""
        confined = {u.rsplit("/", 1)[1] for u, e in units if e is not None}
        trusted_files = {n: t for n, t in texts.items() if n not in confined}
        compiler = tuple(languages.unit_compiler(argv))
        keys = {u: unit_key(compiler, u, trusted_files) for u, e in units if e is None}
        found = {u: self.units.lookup(k) for u, k in keys.items()}
        missing = sorted(u for u, o in found.items() if o is None)
        if missing:
            with contextlib.ExitStack() as locks:
                for k in sorted({keys[u] for u in missing}):
                    locks.enter_context(self.units.lock(k))
                found.update({u: self.units.lookup(keys[u]) for u in missing})  # another build's
                missing = [u for u in missing if found[u] is None]
                if missing:
                    found.update(self._compile_trusted(argv, missing, keys, trusted_files, limits, lim, slot,
                                                       box, pch))
        prebuilt = {}
        for i, u in enumerate(sorted(keys)):
            obj = found.get(u)
            if isinstance(obj, Path):
                (box / "units").mkdir(mode=0o755, exist_ok=True)
                try:  # the build's own copy, mounted read-only
                    shutil.copyfile(obj, box / "units" / f"{i}.o")
                except OSError:  # pruned meanwhile by another process: the build compiles the unit
                    continue
                os.chmod(box / "units" / f"{i}.o", 0o444)
                prebuilt[u] = f"/box/units/{i}.o"
        return prebuilt

    def _compile_trusted(self, argv: list[str], missing: list[str], keys: dict[str, str],
                         trusted_files: dict[str, str], limits: Limits, lim: dict, slot: Slot, box: Path,
                         pch: Path | None) -> dict[str, Path | bool]:
        """Compile the ``missing`` trusted units alone and store their objects under ``keys``."""
        out = box / "unit-out"
        mounts = _compiler_mounts(box / "unit-src", trusted_files, out, slot, pch)
        objects = {u: f"/box/out/{i}.o" for i, u in enumerate(missing)}
        frames: list[tuple[dict, bytes, bytes]] = []
        t0 = time.monotonic()
        try:
            self._launch(languages.unit_objects_argv(argv, objects), ["/dev/null"], lim, mounts, slot,
                         lambda *f: frames.append(f), repeats=1, stop_on_failure=True,
                         memory_mb=limits.compile_memory_mb)
        except (_ProgramFault, SandboxError):
            return {}  # nothing stored: the build compiles the units itself
        if not frames or frames[0][0]["timed_out"] or frames[0][0]["cpu_exceeded"] or frames[0][0]["signal"]:
            return {}  # out of time (a loaded host) is no fact about the unit: nothing stored
        seconds, err = time.monotonic() - t0, frames[0][2].decode("utf-8", "replace")
        done: dict[str, Path | bool] = {}
        for i, u in enumerate(missing):
            obj = out / f"{i}.o"
            done[u] = self.units.store(keys[u], obj if obj.exists() else None, seconds, err)
        return done

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
        program = languages.run_program(lang, job.source, lim.memory_mb, job.toolchain)
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


def _compiler_mounts(src: Path, files: dict[str, str], out: Path, slot: Slot, pch: Path | None) -> list[Mount]:
    """A compile's mounts: ``files`` (name -> text) written to ``src``, read-only at /box/src;
    ``out`` (made here, writable by the slot's uid) at /box/out; the precompiled header at /pch."""
    src.mkdir(mode=0o755)
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    out.mkdir(mode=0o755)
    if os.geteuid() == 0:  # the compiler runs as the slot's unprivileged uid
        os.chown(out, slot.uid, slot.uid)
    return [Mount("/box/src", src), Mount("/box/out", out, writable=True), *([Mount("/pch", pch)] if pch else [])]


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


_FLAG_OK = re.compile(r"^-(f[\w+=.-]+|O[0-3s]|march=[\w-]+|mtune=[\w-]+|l[\w+]+|D\w+(=[\w.]+)?|std=[\w+]+|pthread)$")


def _check_flags(flags: tuple[str, ...]) -> None:
    """Extra compiler flags are code-generation options only: no paths, plugins or specs."""
    for f in flags:
        if not _FLAG_OK.match(f) or f.startswith(("-fplugin", "-fprofile", "-fdump")):
            raise ValueError(f"compiler flag {f!r} is not allowed")


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
