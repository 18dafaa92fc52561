"""A C++ build whose untrusted translation units export only the functions they are asked for.

Run INSIDE the sandbox as the compile step (``python3 -I -S -c <this file> <json>``) when a job
names the functions an extra unit may export (``Job.exports``). Each unit is compiled to its own
object; every other global definition of a confined unit (strong or weak: ``printf``,
``getrusage``, ``operator new``, template instances, asm labels, ifuncs, data) is renamed with a
private suffix before the link (``objcopy --redefine-syms``), so no reference from another unit
or a shared library (libc, libstdc++, libgomp, MPI) can bind to it: the unit keeps its own
copies, and the trusted units get the real ones. Renaming, not localizing, because a local
member of a COMDAT group is dropped with the group when the trusted unit's copy wins the link.

Trust by capability: which definitions may leave the unit is decided by what the caller allows
(the names of the functions it calls), never by a list of dangerous names. The only symbols
kept are those whose demangled name is ``<function>(...)`` at global scope.

Objects of trusted units compiled before (sandbox/cache.py: UnitCache) come in read-only as
``spec["prebuilt"]`` (unit -> object) and are linked as they are; ``spec["objects"]`` (unit ->
object) asks for objects only, no link: the sandbox run that compiles the trusted units alone.

Standard library only: this file is the whole program the sandbox runs for the build.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

PRIVATE_SUFFIX = ".perfalign_private"
# nm's letters for global definitions (upper case), weak objects/functions (V/W), unique (u), ifunc (i)
_DEFINED = set("ABCDGIRSTVWiu")


def exported(demangled: str, functions) -> bool:
    """A global definition may leave its unit: the demangled name is ``f(...)`` for an allowed f."""
    return any(demangled.startswith(f + "(") for f in functions)


def private_name(name: str) -> str:
    """The renamed symbol: no '@' is left (``printf@@GLIBC_2.2.5`` would stay a version of printf)."""
    return name.replace("@", ".at.") + PRIVATE_SUFFIX


def defined_globals(nm: str, obj: str) -> list[str]:
    """Global symbols defined in ``obj`` (POSIX nm format: ``name type value size``)."""
    out = subprocess.run([nm, "-g", "--defined-only", "-P", obj], capture_output=True, text=True, check=True)
    rows = (line.split() for line in out.stdout.splitlines())
    return [parts[0] for parts in rows if len(parts) >= 2 and parts[1] in _DEFINED]


def demangle(cxxfilt: str, names: list[str]) -> list[str]:
    if not names:
        return []
    out = subprocess.run([cxxfilt], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    if len(lines) != len(names):  # one line per name: never guess a pairing
        raise RuntimeError("c++filt returned %d names for %d" % (len(lines), len(names)))
    return lines


def compile_objects(spec: dict) -> int:
    """Compile each unit of ``spec["objects"]`` (unit -> object path) with ``spec["compile"]``;
    a unit that does not compile leaves no object (the caller reads which did), the others go on."""
    failed = 0
    for unit, obj in spec["objects"].items():
        if subprocess.run([*spec["compile"], "-c", "-o", obj, unit]).returncode != 0:
            failed += 1
            if os.path.exists(obj):
                os.unlink(obj)
    return 1 if failed else 0


def build(spec: dict) -> int:
    """Compile ``spec["units"]`` (path -> allowed exports, or None for a trusted unit) one by one
    with ``spec["compile"]`` (the compiler and its flags), or take a trusted unit's object from
    ``spec["prebuilt"]``, confine the confined ones, link with ``spec["link"]`` (flags before the
    objects) and ``spec["libs"]`` (after) into ``spec["output"]``."""
    if "objects" in spec:
        return compile_objects(spec)
    objdir = os.path.join(os.path.dirname(spec["output"]), ".objects")
    os.makedirs(objdir, exist_ok=True)
    try:
        return _build(spec, objdir)
    finally:  # the program is the only output kept
        shutil.rmtree(objdir)


def _build(spec: dict, objdir: str) -> int:
    objects = []
    prebuilt = spec.get("prebuilt") or {}
    for i, (unit, exports) in enumerate(spec["units"]):
        if unit in prebuilt and exports is None:  # a trusted unit compiled before: linked as it is
            sys.stderr.write("note: %s: object from the unit cache (compiled alone, same bytes and command)\n"
                             % os.path.basename(unit))
            objects.append(prebuilt[unit])
            continue
        obj = os.path.join(objdir, "%d.o" % i)
        rc = subprocess.run([*spec["compile"], "-c", "-o", obj, unit]).returncode
        if rc != 0:
            return rc
        if exports is not None:
            names = defined_globals(spec["nm"], obj)
            private = [n for n, d in zip(names, demangle(spec["cxxfilt"], names)) if not exported(d, exports)]
            if private:
                table = obj + ".private"
                with open(table, "w") as f:
                    f.writelines("%s %s\n" % (n, private_name(n)) for n in private)
                rc = subprocess.run([spec["objcopy"], "--redefine-syms=" + table, obj]).returncode
                if rc != 0:
                    return rc
                shown = ", ".join(sorted(private)[:20]) + (" ..." if len(private) > 20 else "")
                sys.stderr.write("note: %s: %d definitions kept private to the unit (%s)\n"
                                 % (os.path.basename(unit), len(private), shown))
        objects.append(obj)
    return subprocess.run([*spec["link"], "-o", spec["output"], *objects, *spec["libs"]]).returncode


if __name__ == "__main__":
    sys.exit(build(json.loads(sys.argv[1])))
