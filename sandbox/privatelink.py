"""A C++ build whose untrusted translation units export only the functions they are asked for.

Run INSIDE the sandbox as the compile step (``python3 -I -S -c <this file> <json>``) when a job
names the functions an extra unit may export (``Job.exports``). Each unit is compiled to its own
object; every other definition of a confined unit that the linker could bind another unit's
reference to (binding GLOBAL, WEAK, GNU_UNIQUE or any other non-local one; any section, custom
ones included; any type: functions, data, ifuncs, TLS, common symbols, asm labels) is renamed
with a private suffix before the link (``objcopy --redefine-syms``), so no reference from another
unit or a shared library (libc, libstdc++, libgomp, MPI) can bind to it: the unit keeps its own
copies, and the trusted units get the real ones. Renaming, not localizing, because a local
member of a COMDAT group is dropped with the group when the trusted unit's copy wins the link.

Trust by capability: which definitions may leave the unit is decided by what the caller allows
(the names of the functions it calls), never by a list of dangerous names. The only symbols
kept are those whose demangled name is ``<function>(...)`` at global scope. The object's own
symbol tables are read here (no tool's letters or output format in between), and read again
after the renaming: a definition left that may bind outside the unit, other than the allowed
functions and the renamed ones, fails the build.

Objects of trusted units compiled before (sandbox/cache.py: UnitCache) come in read-only as
``spec["prebuilt"]`` (unit -> object) and are linked as they are; ``spec["objects"]`` (unit ->
object) asks for objects only, no link: the sandbox run that compiles the trusted units alone.

Standard library only: this file is the whole program the sandbox runs for the build.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

PRIVATE_SUFFIX = ".perfalign_private"
_LOCAL = 0                         # ELF symbol binding; GLOBAL 1, WEAK 2, GNU_UNIQUE 10 and any other leave the unit
_SYMBOL_TABLES = (2, 11)           # SHT_SYMTAB, SHT_DYNSYM
_SHN_UNDEF = 0                     # any other section index (a section, ABS, COMMON, XINDEX) is a definition
_STT_GNU_IFUNC = 10
_SHT_PREINIT_ARRAY = 16


def exported(demangled: str, functions) -> bool:
    """A global definition may leave its unit: the demangled name is ``f(...)`` for an allowed f."""
    return any(demangled.startswith(f + "(") for f in functions)


def private_name(name: str) -> str:
    """The renamed symbol: no '@' is left (``printf@@GLIBC_2.2.5`` would stay a version of printf)."""
    return name.replace("@", ".at.") + PRIVATE_SUFFIX


def _elf(obj: str) -> tuple[bytes, list[tuple]]:
    """The bytes and section headers of a 64-bit little-endian ELF relocatable object (ValueError
    on anything else)."""
    with open(obj, "rb") as f:
        data = f.read()
    if data[:6] != b"\x7fELF\x02\x01" or struct.unpack_from("<H", data, 16)[0] != 1:  # ET_REL
        raise ValueError("%s: not a 64-bit little-endian ELF object" % obj)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shnum == 0 and shoff:  # extended numbering: the count is in section 0's size
        shnum = struct.unpack_from("<Q", data, shoff + 32)[0]
    return data, [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


def _cstr(data: bytes, at: int) -> str:
    return data[at:data.index(b"\0", at)].decode("utf-8", "surrogateescape")


def _symbols(data: bytes, sections: list[tuple]):
    """(name, binding, type, section index) of every entry of the object's symbol tables."""
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind not in _SYMBOL_TABLES:
            continue
        strtab = sections[link][4]
        for at in range(offset + (entsize or 24), offset + size, entsize or 24):  # entry 0 is null
            name_at, info, _, shndx = struct.unpack_from("<IBBH", data, at)
            yield _cstr(data, strtab + name_at), info >> 4, info & 0xF, shndx


def defined_globals(obj: str) -> list[str]:
    """Every symbol ``obj`` defines that the linker can bind another unit's reference to: read
    from the object's own symbol tables (binding not LOCAL, section not UNDEF), whatever its
    section, type or the letter a tool would print for it. Raises ValueError on anything but a
    64-bit little-endian ELF relocatable object."""
    data, sections = _elf(obj)
    return [name for name, bind, _, shndx in _symbols(data, sections) if bind != _LOCAL and shndx != _SHN_UNDEF]


def early_code(obj: str) -> list[str]:
    """What in ``obj`` would run before the program's own start-up code (the trusted driver seals
    its memory there): ifunc resolvers run while the loader relocates the program, a
    .preinit_array before every constructor."""
    data, sections = _elf(obj)
    shstrndx, = struct.unpack_from("<H", data, 0x3E)
    names = sections[sections[0][6] if shstrndx == 0xFFFF else shstrndx][4]  # SHN_XINDEX: in section 0's link
    found = ["ifunc %s" % name for name, _, kind, _ in _symbols(data, sections) if kind == _STT_GNU_IFUNC]
    return found + ["section %s" % _cstr(data, names + s[0]) for s in sections
                    if s[1] == _SHT_PREINIT_ARRAY or _cstr(data, names + s[0]).startswith(".preinit_array")]


def renamable(name: str) -> bool:
    """A name objcopy's rename table and c++filt's one name per line can carry."""
    return name.isascii() and name.isprintable() and not any(c.isspace() or c == "#" for c in name)


def leftovers(obj: str, allowed: set[str]) -> list[str]:
    """The definitions of ``obj`` that may bind outside it and are not in ``allowed``: the
    confinement checked on its result, not on how it was made."""
    return sorted(set(defined_globals(obj)) - allowed)


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
            rc = confine(spec, unit, obj, exports)
            if rc != 0:
                return rc
        objects.append(obj)
    return subprocess.run([*spec["link"], "-o", spec["output"], *objects, *spec["libs"]]).returncode


def confine(spec: dict, unit: str, obj: str, exports) -> int:
    """Rename every definition of ``obj`` but the allowed functions, then check the result: a
    definition that may still bind outside the unit, other than those and the renamed ones,
    fails the build."""
    try:
        return _confine(spec, unit, obj, exports)
    except (ValueError, IndexError, struct.error) as e:  # not an object this file can read: no guess
        sys.stderr.write("error: %s: %s\n" % (os.path.basename(unit), e))
        return 1


def _confine(spec: dict, unit: str, obj: str, exports) -> int:
    early = early_code(obj)
    if early:
        sys.stderr.write("error: %s: code that would run before the program starts is not allowed here "
                         "(__attribute__((ifunc)), target_clones, .preinit_array): %s\n"
                         % (os.path.basename(unit), ", ".join(ascii(e) for e in early[:10])))
        return 1
    names = sorted(set(defined_globals(obj)))
    plain = [n for n in names if renamable(n)]
    kept = {n for n, d in zip(plain, demangle(spec["cxxfilt"], plain)) if exported(d, exports)}
    private = [n for n in plain if n not in kept]
    if private:
        table = obj + ".private"
        with open(table, "w") as f:
            f.writelines("%s %s\n" % (n, private_name(n)) for n in private)
        rc = subprocess.run([spec["objcopy"], "--redefine-syms=" + table, obj]).returncode
        if rc != 0:
            return rc
        shown = ", ".join(private[:20]) + (" ..." if len(private) > 20 else "")
        sys.stderr.write("note: %s: %d definitions kept private to the unit (%s)\n"
                         % (os.path.basename(unit), len(private), shown))
    left = leftovers(obj, kept | {private_name(n) for n in private})
    if left:
        sys.stderr.write("error: %s: definitions other than %s would be visible to the rest of the program: %s\n"
                         % (os.path.basename(unit), ", ".join(exports), ", ".join(ascii(n) for n in left[:20])))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(build(json.loads(sys.argv[1])))
