"""The sandbox API: compile once (cached), run against many tests, judge, measure.

    sb = Sandbox(backend="auto")
    result = sb.run(source, "cpp", [TestCase("1 2\\n", "3\\n")], Limits(time_s=2), repeats=3)
    for index, result in sb.run_many(jobs, workers=2): ...
"""
from __future__ import annotations

import atexit
import concurrent.futures as cf
import itertools
import json
import math
import os
import queue
import re
import shutil
import signal as _signal
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from . import cgroups, languages
from .backends import Backend, Mount, Slot, make_backend
from .backends.bwrap import GUEST_ENV
from .cache import CompileCache, compile_key, pch_dir
from .checker import DEFAULT_TOLERANCE, outputs_match
from .types import CompileInfo, Language, Limits, RunResult, TestCase, TestResult, Verdict, overall_verdict

MB = 1024 * 1024
# Headroom of the whole-sandbox memory cgroup over the program's limit (runner, tmpfs files).
_CGROUP_HEADROOM_MB = 64
# The JVM needs room beyond -Xmx (metaspace, code cache, thread stacks).
_JVM_OVERHEAD_MB = 192
_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "java.lang.OutOfMemoryError", "Cannot allocate memory")
_UID_BASE = 200000
_SLOT_SERIAL = itertools.count()
# Sandboxes not closed by their owner still release their cgroups at exit.
_LIVE: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()
atexit.register(lambda: [sb.close() for sb in list(_LIVE)])


@dataclass
class Job:
    source: str
    language: Language | str | int
    tests: Sequence[TestCase] = ()
    limits: Limits = field(default_factory=Limits)
    repeats: int = 1
    keep_output: bool = False
    stop_on_failure: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    # C++ only: flags appended to g++ (e.g. ("-fopenmp",) for OpenMP kernels); part of the cache key.
    compile_flags: tuple[str, ...] = ()
    # Extra environment for the program (e.g. {"OMP_NUM_THREADS": "2"}); nothing else of ours leaks in.
    env: dict[str, str] = field(default_factory=dict)


class SandboxError(RuntimeError):
    """Infrastructure fault (not the program's): reported as SANDBOX_ERROR, retryable."""


class Sandbox:
    """Runs untrusted submissions through one backend with up to ``workers`` concurrent slots."""

    def __init__(self, backend: str = "auto", workers: int = 1, calibrate: bool = True,
                 cgroups_enabled: bool = True, cache_dir: Path | None = None) -> None:
        self.backend: Backend = make_backend(backend)
        self.workers = max(1, int(workers))
        self.cache = CompileCache(cache_dir)
        self._calibrate = calibrate
        self._calibration: dict | None = None
        self._cal_lock = threading.Lock()
        self._layout = cgroups.probe() if (cgroups_enabled and self.backend.name == "bwrap") else None
        self._slots: queue.Queue[Slot] = queue.Queue()
        self._all_slots: list[Slot] = []
        self._slot_lock = threading.Lock()
        self._closed = False
        _LIVE.add(self)

    # ------------------------------------------------------------------ public API
    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def isolated(self) -> bool:
        return self.backend.isolated

    def run(self, source: str, language: Language | str | int, tests: Sequence[TestCase] | None = None,
            limits: Limits | None = None, repeats: int = 1, keep_output: bool = False,
            stop_on_failure: bool = False, tolerance: float = DEFAULT_TOLERANCE) -> RunResult:
        """Compile ``source`` (cached) and run it on each test ``repeats`` times.

        Without tests it runs once on empty stdin with no output check.
        """
        job = Job(source, language, tuple(tests) if tests else (TestCase(),), limits or Limits(),
                  repeats, keep_output, stop_on_failure, tolerance)
        return self.run_job(job)

    def run_job(self, job: Job) -> RunResult:
        if job.repeats < 1:
            raise ValueError("repeats must be >= 1")
        _check_flags(tuple(job.compile_flags))
        lang = Language.parse(job.language)
        calibration = self.calibration() if self._calibrate else {}
        slot = self._acquire()
        try:
            return self._run_in_slot(job, lang, slot, calibration)
        finally:
            self._slots.put(slot)

    def run_many(self, jobs: Iterable[Job], workers: int | None = None) -> Iterator[tuple[int, RunResult]]:
        """Run jobs concurrently (threads: the work is in child processes); yields
        ``(index, result)`` in completion order."""
        jobs = list(jobs)
        n = min(workers or self.workers, max(1, len(jobs)))
        self.workers = max(self.workers, n)
        if self._calibrate:
            self.calibration()  # once, before the workers compete for the CPU
        with cf.ThreadPoolExecutor(max_workers=n, thread_name_prefix="sandbox") as pool:
            futures = {pool.submit(self.run_job, job): i for i, job in enumerate(jobs)}
            for fut in cf.as_completed(futures):
                yield futures[fut], fut.result()

    def calibration(self) -> dict:
        """CPU time of a fixed reference program on this host and backend (cached)."""
        with self._cal_lock:
            if self._calibration is None:
                from .calibration import measure_calibration

                self._calibration = measure_calibration(self)
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
        try:
            return self._slots.get_nowait()
        except queue.Empty:
            pass
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
                slot = Slot(index=len(self._all_slots), uid=uid, cgroup=cg)
                self._all_slots.append(slot)
                return slot
        return self._slots.get()

    # ------------------------------------------------------------------ compile + run
    def _run_in_slot(self, job: Job, lang: Language, slot: Slot, calibration: dict) -> RunResult:
        def result(verdict: Verdict, compile_info: CompileInfo, tests=(), message: str = "") -> RunResult:
            return RunResult(verdict=verdict, backend=self.name, language=lang, isolated=self.isolated,
                             compile=compile_info, tests=list(tests), calibration=calibration,
                             message=message or ("" if self.isolated else "not isolated"))

        ok, why = languages.supported(lang)
        if not ok:
            return result(Verdict.UNSUPPORTED_LANGUAGE, CompileInfo(ok=False, message=why), message=why)
        with tempfile.TemporaryDirectory(prefix="perfalign-box-") as box:
            box = Path(box)
            os.chmod(box, 0o755)
            try:
                prog_dir, info = self._compile(job.source, lang, job.limits, slot, box, tuple(job.compile_flags))
            except SandboxError as e:
                return result(Verdict.SANDBOX_ERROR, CompileInfo(ok=False, message=str(e)), message=str(e))
            if not info.ok:
                return result(Verdict.COMPILE_ERROR, info, message="compile error")
            try:
                tests = self._execute(job, lang, prog_dir, slot, box)
            except SandboxError as e:
                return result(Verdict.SANDBOX_ERROR, info, message=str(e))
        return result(overall_verdict(tests), info, tests)

    def _compile(self, source: str, lang: Language, limits: Limits, slot: Slot, box: Path,
                 extra_flags: tuple[str, ...] = ()) -> tuple[Path, CompileInfo]:
        # The PCH only matches the default flags; with extra flags g++ reads the header instead.
        pch = pch_dir() if lang is Language.CPP and not extra_flags else None
        argv = languages.compile_argv(lang, source, "/pch" if pch else None, extra_flags)
        if argv is None:  # interpreted: the "program" is the source file
            prog = box / "prog"
            prog.mkdir(mode=0o755)
            (prog / "main.py").write_text(source, encoding="utf-8", errors="surrogateescape")
            os.chmod(prog / "main.py", 0o644)
            return prog, CompileInfo(ok=True)
        key = compile_key(lang, tuple(argv), source)
        hit = self.cache.get(key)
        if hit:
            return hit
        src = box / "src"
        src.mkdir(mode=0o755)
        (src / languages.source_filename(lang, source)).write_text(source, encoding="utf-8", errors="surrogateescape")
        out = self.cache.staging() / "out"
        out.mkdir(mode=0o755)
        if os.geteuid() == 0:  # the compiler runs as the slot's unprivileged uid
            os.chown(out, slot.uid, slot.uid)
        mounts = [Mount("/box/src", src), Mount("/box/out", out, writable=True)]
        if pch:
            mounts.append(Mount("/pch", pch))
        lim = {"wall_s": limits.compile_time_s, "cpu_s": math.ceil(limits.compile_time_s), "fsize_bytes": 512 * MB,
               "nproc": max(limits.processes, 64), "nofile": 1024}
        t0 = time.monotonic()
        try:
            heads = self._launch(argv, ["/dev/null"], lim, mounts, slot, repeats=1, keep_output=True,
                                 stop_on_failure=True, memory_mb=limits.compile_memory_mb)
        except SandboxError:
            shutil.rmtree(out.parent, ignore_errors=True)  # nothing to cache from a failed sandbox
            raise
        seconds = time.monotonic() - t0
        head, _, err = heads[0]
        ok = not head["timed_out"] and head["signal"] is None and head["exit_code"] == 0
        message = err.decode("utf-8", "replace")[-8000:]
        if head["timed_out"]:
            message = f"compilation exceeded {limits.compile_time_s:g} s\n" + message
        for p in out.rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() or p.name == "prog" else 0o644)
        info = CompileInfo(ok=ok, seconds=round(seconds, 4), message=message.strip())
        final = self.cache.commit(key, out, info)
        shutil.rmtree(out.parent, ignore_errors=True)
        return final, info

    def _execute(self, job: Job, lang: Language, prog_dir: Path, slot: Slot, box: Path) -> list[TestResult]:
        lim = job.limits
        inputs = box / "in"
        inputs.mkdir(mode=0o755)
        for i, t in enumerate(job.tests):
            p = inputs / str(i)
            p.write_text(t.input, encoding="utf-8", errors="surrogateescape")
            os.chmod(p, 0o644)
        program = languages.run_program(lang, job.source, lim.memory_mb)
        use_as = slot.cgroup is None and not program.java  # RLIMIT_AS breaks the JVM
        rl = {
            "wall_s": lim.time_s,
            "cpu_s": math.ceil(lim.time_s) + 1,
            "as_bytes": (lim.memory_mb + _CGROUP_HEADROOM_MB) * MB if use_as else None,
            "fsize_bytes": lim.output_mb * MB,
            "nproc": lim.processes,
            "stack_bytes": lim.memory_mb * MB,
            "nofile": 256,
        }
        mounts = [Mount("/box/prog", prog_dir), Mount("/box/in", inputs)]
        heads = self._launch(list(program.argv), [f"/box/in/{i}" for i in range(len(job.tests))], rl, mounts, slot,
                             env=job.env,
                             repeats=job.repeats, keep_output=True, stop_on_failure=job.stop_on_failure,
                             memory_mb=lim.memory_mb + (_JVM_OVERHEAD_MB if program.java else 0))
        by_test: dict[int, list[tuple[dict, bytes, bytes]]] = {}
        for frame in heads:
            by_test.setdefault(frame[0]["test"], []).append(frame)
        results = []
        for i in sorted(by_test):
            results.append(self._judge(by_test[i], job.tests[i], job, lim))
        return results

    def _judge(self, frames: list[tuple[dict, bytes, bytes]], test: TestCase, job: Job, lim: Limits) -> TestResult:
        cpu = [f[0]["cpu_s"] for f in frames]
        wall = [f[0]["wall_s"] for f in frames]
        rss = [f[0]["max_rss_kb"] for f in frames]
        first_out = frames[0][1]
        verdict, message = Verdict.OK, ""
        exit_code = signal = None
        for head, out, err in frames:
            exit_code, signal = head["exit_code"], head["signal"]
            stderr = err.decode("utf-8", "replace")
            verdict, message = _classify(head, stderr, lim)
            if verdict is Verdict.OK and head["repeat"] == 0 and test.expected is not None:
                if not outputs_match(test.expected, out.decode("utf-8", "replace"), job.tolerance):
                    verdict, message = Verdict.WRONG_ANSWER, "output differs from the expected output"
            if verdict is not Verdict.OK:
                break
        output = first_out.decode("utf-8", "replace") if job.keep_output else None
        return TestResult.from_repeats(verdict, cpu, wall, rss, exit_code=exit_code, signal=signal,
                                       message=message, output=output)

    def _launch(self, argv: list[str], tests: list[str], limits: dict, mounts: list[Mount], slot: Slot, *,
                env: dict[str, str] | None = None,
                repeats: int, keep_output: bool, stop_on_failure: bool, memory_mb: int) -> list[tuple[dict, bytes, bytes]]:
        if slot.cgroup:
            slot.cgroup.set_limits((memory_mb + _CGROUP_HEADROOM_MB) * MB, limits.get("nproc", 64) + 8)
        spec = {
            "argv": argv, "cwd": "/tmp", "env": {**(env or {}), **GUEST_ENV}, "tests": tests, "repeats": repeats,
            "limits": limits, "scratch": "/tmp/scratch", "keep_output": keep_output,
            "stop_on_failure": stop_on_failure, "max_output_bytes": limits["fsize_bytes"] + 1,
            "oom_file": self.backend.guest_oom_file(slot),
            # Without cgroups the rlimits are the only memory/process bound: make them hard.
            "hard_limits": slot.cgroup is None,
            "tmp_bytes": limits["fsize_bytes"] * 2 + 64 * MB,
        }
        budget = len(tests) * repeats * (float(limits["wall_s"]) + 2.0) + 30.0
        outcome = self.backend.execute(spec, mounts, slot, timeout=budget)
        frames, done = _parse_frames(outcome.stdout)
        if not done:
            tail = outcome.stderr.decode("utf-8", "replace").strip()[-1000:]
            raise SandboxError(f"sandbox runner failed (exit {outcome.returncode}): {tail or 'no output'}")
        for head, _, err in frames:
            if head["exit_code"] == 127 and err.startswith(b"runner: exec failed"):
                raise SandboxError(err.decode("utf-8", "replace").strip())
        return frames


_FLAG_OK = re.compile(r"^-(f[\w+=.-]+|O[0-3s]|march=[\w-]+|mtune=[\w-]+|l[\w+]+|D\w+(=[\w.]+)?|std=[\w+]+|pthread)$")


def _check_flags(flags: tuple[str, ...]) -> None:
    """Extra compiler flags are code-generation options only: no paths, plugins or specs."""
    for f in flags:
        if not _FLAG_OK.match(f) or f.startswith(("-fplugin", "-fprofile", "-fdump")):
            raise ValueError(f"compiler flag {f!r} is not allowed")


def _parse_frames(data: bytes) -> tuple[list[tuple[dict, bytes, bytes]], bool]:
    frames, pos = [], 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        try:
            head = json.loads(data[pos:nl])
        except ValueError:
            break
        pos = nl + 1
        if head.get("done"):
            return frames, True
        out = data[pos:pos + head["out_len"]]
        pos += head["out_len"]
        err = data[pos:pos + head["err_len"]]
        pos += head["err_len"]
        frames.append((head, out, err))
    return frames, False


def _classify(head: dict, stderr: str, lim: Limits) -> tuple[Verdict, str]:
    """Verdict of one execution from the runner's raw report (output checked separately)."""
    sig, code = head["signal"], head["exit_code"]
    if head["timed_out"] or head["wall_s"] > lim.time_s or sig == _signal.SIGXCPU:
        return Verdict.TIME_LIMIT_EXCEEDED, f"exceeded the {lim.time_s:g} s time limit"
    if head.get("oom_kills", 0) > 0:
        return Verdict.MEMORY_LIMIT_EXCEEDED, f"exceeded the {lim.memory_mb} MB memory limit"
    # A stack overflow faults at RLIMIT_STACK (= the memory limit) with RSS near the limit:
    # that is the program's crash, not a memory-limit verdict.
    if head["max_rss_kb"] > lim.memory_mb * 1024 and sig != _signal.SIGSEGV:
        return Verdict.MEMORY_LIMIT_EXCEEDED, f"exceeded the {lim.memory_mb} MB memory limit"
    if sig == _signal.SIGXFSZ or head.get("out_size", 0) > lim.output_mb * MB:
        return Verdict.OUTPUT_LIMIT_EXCEEDED, f"wrote more than {lim.output_mb} MB"
    if sig is not None or code != 0:
        if any(m in stderr for m in _MEMORY_MARKERS):
            return Verdict.MEMORY_LIMIT_EXCEEDED, f"ran out of memory (limit {lim.memory_mb} MB)"
        if sig == _signal.SIGKILL and head["cpu_s"] >= math.ceil(lim.time_s) + 1:
            return Verdict.TIME_LIMIT_EXCEEDED, f"exceeded the {lim.time_s:g} s time limit (CPU)"
        what = f"killed by signal {sig} ({_signal_name(sig)})" if sig is not None else f"exit code {code}"
        return Verdict.RUNTIME_ERROR, (what + ("\n" + stderr[-2000:] if stderr.strip() else "")).strip()
    return Verdict.OK, ""


def _signal_name(sig: int) -> str:
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return "unknown"
