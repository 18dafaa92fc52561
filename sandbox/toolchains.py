"""How each language is compiled and run inside the sandbox.

Paths here are *guest* paths (inside the sandbox): the source is at /box/src, compile output
goes to /box/out, and a compiled program is mounted read-only at /box/prog.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import environments
from .types import Language

CPP_FLAGS = ("-O2", "-std=gnu++17")
# Stable timing for Java (platform-facts: default JVM CPU-time CV ~15%, ~2% with these).
JAVA_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xss64m")
PYTHON3 = "/usr/bin/python3"
# CodeContests Java files often name their public class something other than Main.
_JAVA_PUBLIC_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)")
_JAVA_ANY_CLASS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)")
_JAVA_MAIN = re.compile(r"public\s+static\s+void\s+main\s*\(")


@dataclass(frozen=True)
class Program:
    """A runnable program: argv inside the sandbox (relative to /box/prog)."""

    argv: tuple[str, ...]
    java: bool = False


def java_main_class(source: str) -> str:
    """The class that holds main: the public class if any, else the first class with main."""
    if m := _JAVA_PUBLIC_CLASS.search(source):
        return m.group(1)
    classes = list(_JAVA_ANY_CLASS.finditer(source))
    for i, c in enumerate(classes):
        end = classes[i + 1].start() if i + 1 < len(classes) else len(source)
        if _JAVA_MAIN.search(source, c.end(), end):
            return c.group(1)
    return classes[0].group(1) if classes else "Main"


def source_filename(language: Language, source: str) -> str:
    if language is Language.CPP:
        return "main.cpp"
    if language is Language.JAVA:
        return java_main_class(source) + ".java"
    return "main.py"


def supported(language: Language) -> tuple[bool, str]:
    if language in (Language.CPP, Language.PYTHON3, Language.JAVA):
        return True, ""
    if language is Language.PYTHON2:
        py2 = environments.python2()
        return (True, "") if py2.root else (False, py2.reason)
    return False, f"language {language.value!r} is not supported"


def compile_argv(language: Language, source: str, pch_dir: str | None, extra_flags: tuple[str, ...] = (),
                 toolchain: str = "default") -> list[str] | None:
    """The compiler command (guest paths), or None if the language needs no compile step."""
    if language is Language.CPP:
        inc = ["-I", pch_dir, "-Winvalid-pch"] if pch_dir else []
        # extra flags go before the sources; libraries (-l...) must follow them
        libs = [f for f in extra_flags if f.startswith("-l")]
        opts = [f for f in extra_flags if not f.startswith("-l")]
        if parse_toolchain(toolchain)[0] == "mpi":  # Open MPI's wrapper flags (mpicxx --showme)
            mpi_compile, mpi_link = mpi_flags()
            opts, libs = [*mpi_compile, *opts], [*libs, *mpi_link]
        return ["/usr/bin/g++", *CPP_FLAGS, *opts, *inc, "-fdiagnostics-color=never", "-o", "/box/out/prog",
                "/box/src/main.cpp", *libs]
    if language is Language.JAVA:
        return ["/usr/bin/javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-encoding", "UTF-8", "-nowarn",
                "-d", "/box/out", f"/box/src/{source_filename(language, source)}"]
    return None


PRIVATE_LINK = Path(__file__).with_name("privatelink.py")


def unit_compiler(argv: list[str]) -> list[str]:
    """The compiler and its flags of ``compile_argv``'s C++ command (what compiles each unit)."""
    return argv[:argv.index("-o")]


def private_link_argv(argv: list[str], units: list[tuple[str, tuple[str, ...] | None]],
                      prebuilt: dict[str, str] | None = None) -> list[str]:
    """The C++ build of ``compile_argv``'s command as privatelink.py runs it: every unit compiled
    on its own (or, for a trusted unit in ``prebuilt``, its object compiled before), a unit with
    exports (not None) confined to them, linked in the order given (the trusted units first:
    their COMDAT copies win) with full RELRO (the GOT is read-only once the program runs).
    ``argv`` is ``[g++, flags..., -o, out, main.cpp, libs...]``."""
    at = argv.index("-o")
    compiler, out, libs = unit_compiler(argv), argv[at + 1], argv[at + 3:]
    spec = {"units": [[u, list(e) if e is not None else None] for u, e in units], "compile": compiler,
            "link": [*compiler, "-Wl,-z,relro,-z,now"], "libs": libs, "output": out,
            "cxxfilt": "/usr/bin/c++filt", "objcopy": "/usr/bin/objcopy"}
    if prebuilt:
        spec["prebuilt"] = prebuilt
    return _privatelink(spec)


def unit_objects_argv(argv: list[str], objects: dict[str, str]) -> list[str]:
    """privatelink.py compiling trusted units only (unit -> object path), no link: the objects
    the unit cache keeps (sandbox/cache.py)."""
    return _privatelink({"objects": objects, "compile": unit_compiler(argv)})


def _privatelink(spec: dict) -> list[str]:
    """privatelink.py run by the system interpreter, isolated, with ``spec`` as its argument."""
    return [PYTHON3, "-I", "-S", "-c", PRIVATE_LINK.read_text(), json.dumps(spec)]


def run_program(language: Language, source: str, memory_mb: int, toolchain: str = "default") -> Program:
    if language is Language.CPP:
        kind, ranks = parse_toolchain(toolchain)
        if kind == "mpi":
            return Program(mpirun_argv(ranks, "/box/prog/prog"))
        return Program(("/box/prog/prog",))
    if language is Language.JAVA:
        main = java_main_class(source)
        return Program(("/usr/bin/java", *JAVA_FLAGS, f"-Xmx{memory_mb}m", "-cp", "/box/prog", main), java=True)
    if language is Language.PYTHON2:
        return Program(environments.python2_argv("/box/prog/main.py"))
    return Program((PYTHON3, "-B", "/box/prog/main.py"))


@functools.lru_cache(maxsize=None)
def toolchain_id(language: Language) -> str:
    """Compiler/interpreter version string: part of the compile-cache key."""
    cmd = {
        Language.CPP: ["g++", "--version"],
        Language.JAVA: ["javac", "-version"],
        Language.PYTHON3: [PYTHON3, "--version"],
    }.get(language)
    if language is Language.PYTHON2:  # runs only through the bullseye root's loader
        py2 = environments.python2()
        return f"Python {py2.version}" if py2.root else "unavailable"
    if not cmd:
        return "none"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (p.stdout + p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unavailable"


# ---------------------------------------------------------------------------- MPI toolchain
# Job.toolchain "mpi" / "mpi:N": compiled with Open MPI's wrapper flags, run as `mpirun -np N`
# (default 2) inside the sandbox. The sandbox has no network, no /sys and a seccomp filter that
# denies process_vm_readv: ranks talk over shared memory (vader) without CMA single-copy, on the
# local node only, without hwloc's sysfs discovery or CPU binding (the cpuset confines them);
# idle ranks yield the CPU instead of spinning (ranks can outnumber the cpuset's CPUs).
MPI_DEFAULT_RANKS = 2
MPI_MCA = (("btl", "self,vader"), ("pml", "ob1"), ("osc", "^ucx"), ("mtl", "^ofi,psm,psm2"),
           ("btl_vader_single_copy_mechanism", "none"), ("rmaps_base_oversubscribe", "1"),
           ("hwloc_base_binding_policy", "none"), ("plm", "isolated"), ("mpi_yield_when_idle", "1"))


def parse_toolchain(toolchain: str) -> tuple[str, int]:
    """("default", 0) or ("mpi", ranks); anything else is an error."""
    name, _, arg = (toolchain or "default").partition(":")
    if name == "default" and not arg:
        return "default", 0
    if name == "mpi":
        ranks = int(arg) if arg else MPI_DEFAULT_RANKS
        if not 1 <= ranks <= 64:
            raise ValueError(f"toolchain {toolchain!r}: MPI ranks must be in 1..64")
        return "mpi", ranks
    raise ValueError(f"unknown toolchain {toolchain!r} (default, mpi or mpi:N)")


@functools.lru_cache(maxsize=None)
def mpi_flags() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(compile flags, link flags) of Open MPI's C++ wrapper on this host."""
    try:
        compile_ = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True, timeout=30)
        link = subprocess.run(["mpicxx", "--showme:link"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"MPI toolchain unavailable (apt-get install openmpi-bin libopenmpi-dev): {e}") from None
    if compile_.returncode or link.returncode:
        raise RuntimeError("MPI toolchain unavailable: mpicxx --showme failed")
    return tuple(compile_.stdout.split()), tuple(link.stdout.split())


@functools.lru_cache(maxsize=None)
def mpirun_path() -> str:
    found = shutil.which("mpirun")
    if not found:
        raise RuntimeError("MPI toolchain unavailable: no mpirun (apt-get install openmpi-bin)")
    return os.path.realpath(found)  # /usr/bin/mpirun is an /etc/alternatives link


def mpirun_argv(ranks: int, program: str) -> tuple[str, ...]:
    mca = [a for key, value in MPI_MCA for a in ("--mca", key, value)]
    return ("/usr/bin/env", "HWLOC_COMPONENTS=-linux,x86", mpirun_path(), "-np", str(ranks), *mca, program)


def describe(language: Language) -> dict:
    """What a result records about the environment that measured it (versions)."""
    out: dict = {"toolchain": toolchain_id(language)}
    if language is Language.PYTHON3:
        libs = environments.python3_libs()
        out["libraries"] = dict(libs.libraries)
        if libs.dir is None:
            out["libraries_missing"] = libs.reason
    elif language is Language.PYTHON2:
        py2 = environments.python2()
        out["root"] = "debian bullseye" if py2.root else None
    return out
