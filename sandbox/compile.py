"""Compilation in the sandbox: each program built once and cached by content; the trusted units
of a private-link build compiled apart (no candidate byte) and cached as objects."""
from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal as _signal
import time
from pathlib import Path

from . import toolchains
from .backends import Mount, Slot
from .cache import compile_key, pch_dir, unit_key
from .frames import MB, SandboxError, _ProgramFault
from .types import CompileInfo, Job, Language, Limits

# Largest compiled program (all files of a compile-cache entry) we keep.
MAX_PROGRAM_MB = 64
# Processes of the slot's uid that are not the program's: the runner (bwrap's outer process
# lives in the parent user namespace and is not counted against the program's RLIMIT_NPROC).
_INFRA_PROCESSES = 1
_SOURCE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.(cpp|cc|cxx|h|hpp)$")
_FLAG_OK = re.compile(r"^-(f[\w+=.-]+|O[0-3s]|march=[\w-]+|mtune=[\w-]+|l[\w+]+|D\w+(=[\w.]+)?|std=[\w+]+|pthread)$")


class Compiler:
    """The compile half of ``Sandbox`` (a mixin: it uses the sandbox's ``cache``, ``units`` and ``_launch``)."""

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
        argv = toolchains.compile_argv(lang, source, "/pch" if pch else None, extra_flags, job.toolchain)
        units = [f"/box/src/{n}" for n in sorted(extra_sources) if not n.endswith((".h", ".hpp"))]
        plain, link_units = argv, None
        if argv is not None and exports:  # some units may export only the functions named
            link_units = [("/box/src/main.cpp", None)] + [
                (u, tuple(exports[u.rsplit("/", 1)[1]]) if u.rsplit("/", 1)[1] in exports else None) for u in units]
            argv = toolchains.private_link_argv(argv, link_units)
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
        files = {toolchains.source_filename(lang, source): source, **extra_sources}
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
                argv = toolchains.private_link_argv(plain, link_units, prebuilt)
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
        compiler = tuple(toolchains.unit_compiler(argv))
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
            self._launch(toolchains.unit_objects_argv(argv, objects), ["/dev/null"], lim, mounts, slot,
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


def _check_flags(flags: tuple[str, ...]) -> None:
    """Extra compiler flags are code-generation options only: no paths, plugins or specs."""
    for f in flags:
        if not _FLAG_OK.match(f) or f.startswith(("-fplugin", "-fprofile", "-fdump")):
            raise ValueError(f"compiler flag {f!r} is not allowed")
