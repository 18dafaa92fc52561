"""How each language is compiled and run inside the sandbox.

Paths here are *guest* paths (inside the sandbox): the source is at /box/src, compile output
goes to /box/out, and a compiled program is mounted read-only at /box/prog.
"""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

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
    m = _JAVA_PUBLIC_CLASS.search(source)
    if m:
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


@functools.lru_cache(maxsize=None)
def python2_path() -> str | None:
    for name in ("python2", "python2.7"):
        path = shutil.which(name, path="/usr/bin:/usr/local/bin:/bin")
        if path:
            return path
    return None


def supported(language: Language) -> tuple[bool, str]:
    if language in (Language.CPP, Language.PYTHON3, Language.JAVA):
        return True, ""
    if language is Language.PYTHON2:
        if python2_path():
            return True, ""
        return False, "Python 2 (CodeContests language 1): no python2 interpreter on this host"
    return False, f"language {language.value!r} is not supported"


def compile_argv(language: Language, source: str, pch_dir: str | None, extra_flags: tuple[str, ...] = ()) -> list[str] | None:
    """The compiler command (guest paths), or None if the language needs no compile step."""
    if language is Language.CPP:
        inc = ["-I", pch_dir, "-Winvalid-pch"] if pch_dir else []
        # extra flags go before the sources; libraries (-l...) must follow them
        libs = [f for f in extra_flags if f.startswith("-l")]
        opts = [f for f in extra_flags if not f.startswith("-l")]
        return ["/usr/bin/g++", *CPP_FLAGS, *opts, *inc, "-fdiagnostics-color=never", "-o", "/box/out/prog",
                "/box/src/main.cpp", *libs]
    if language is Language.JAVA:
        name = source_filename(language, source)
        return ["/usr/bin/javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-encoding", "UTF-8", "-nowarn", "-d", "/box/out", f"/box/src/{name}"]
    return None


def run_program(language: Language, source: str, memory_mb: int) -> Program:
    if language is Language.CPP:
        return Program(("/box/prog/prog",))
    if language is Language.JAVA:
        main = java_main_class(source)
        return Program(("/usr/bin/java", *JAVA_FLAGS, f"-Xmx{memory_mb}m", "-cp", "/box/prog", main), java=True)
    if language is Language.PYTHON2:
        return Program((python2_path() or "/usr/bin/python2", "/box/prog/main.py"))
    return Program((PYTHON3, "-B", "/box/prog/main.py"))


@functools.lru_cache(maxsize=None)
def toolchain_id(language: Language) -> str:
    """Compiler/interpreter version string: part of the compile-cache key."""
    cmd = {
        Language.CPP: ["g++", "--version"],
        Language.JAVA: ["javac", "-version"],
        Language.PYTHON3: [PYTHON3, "--version"],
        Language.PYTHON2: [python2_path() or "python2", "--version"],
    }.get(language)
    if not cmd:
        return "none"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (p.stdout + p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unavailable"
