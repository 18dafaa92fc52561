"""perfcount, the valgrind tool the deterministic clocks run under (source: perfcount.c beside this).

Built once per host from the source and Debian's valgrind (its tool headers and static core
libraries ship in the ``valgrind`` package), cached under the cache root, and run through valgrind's
own launcher with ``VALGRIND_LIB`` pointing at a directory that holds it beside links to valgrind's
installed files. Why a tool of our own and not cachegrind: perfcount.c's header (client requests).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from pathlib import Path

TOOL = "perfcount"
SOURCE = Path(__file__).with_name("perfcount.c")
VALGRIND_LIBEXEC = Path("/usr/libexec/valgrind")          # the launcher's files (vgpreload_core, ...)
VALGRIND_STATIC = Path("/usr/lib/x86_64-linux-gnu/valgrind")  # libcoregrind / libvex to link a tool
# valgrind's Makefile.tool.am for amd64-linux: a static executable at valgrind's load address
CFLAGS = ("-O2", "-fno-strict-aliasing", "-fno-builtin", "-fno-stack-protector", "-m64", "-DVGA_amd64=1",
          "-DVGO_linux=1", "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1", "-I/usr/include/valgrind")
LDFLAGS = ("-m64", "-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start", "-Wl,--build-id=none",
           "-Wl,-Ttext-segment=0x58000000")


class ToolUnavailable(RuntimeError):
    """perfcount cannot be built on this host (a one-line reason)."""


def _libs() -> list[Path]:
    return [VALGRIND_STATIC / "libcoregrind-amd64-linux.a", VALGRIND_STATIC / "libvex-amd64-linux.a"]


def missing() -> str | None:
    """Why perfcount cannot be built here, or None."""
    if os.uname().machine != "x86_64":
        return f"the deterministic clocks' valgrind tool is built for amd64 only (this host: {os.uname().machine})"
    absent = [str(p) for p in (*_libs(), Path("/usr/include/valgrind/pub_tool_basics.h"), VALGRIND_LIBEXEC)
              if not p.exists()]
    if absent:
        return f"valgrind's tool libraries are missing ({absent[0]}): apt-get install valgrind"
    return None


def tool_dir() -> Path:
    """The directory to give valgrind as VALGRIND_LIB (built on first use; keyed by the source, the
    valgrind installation and the flags, so an upgrade of either builds it again)."""
    from perfalign.common.fileio import atomic_write
    from perfalign.common.paths import cache_root

    if why := missing():
        raise ToolUnavailable(why)
    h = hashlib.sha256(SOURCE.read_bytes() + " ".join(CFLAGS + LDFLAGS).encode())
    for lib in _libs():
        st = lib.stat()
        h.update(f"{lib}:{st.st_size}:{st.st_mtime_ns}".encode())
    out = cache_root() / "valgrind" / f"{TOOL}-{h.hexdigest()[:16]}"
    exe = out / f"{TOOL}-amd64-linux"
    if exe.exists() and exe.stat().st_size > 0:
        return out
    out.mkdir(parents=True, exist_ok=True)
    for f in VALGRIND_LIBEXEC.iterdir():  # valgrind's own files, as the launcher expects to find them
        with contextlib.suppress(FileExistsError):  # made before, or by another worker
            (out / f.name).symlink_to(f)

    def build(tmp: Path) -> None:
        obj = tmp.with_suffix(".o")
        try:
            for cmd in (["gcc", *CFLAGS, "-c", str(SOURCE), "-o", str(obj)],
                        ["gcc", *LDFLAGS, "-o", str(tmp), str(obj), *map(str, _libs()), "-lgcc"]):
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                if p.returncode != 0:
                    raise ToolUnavailable("cannot build the valgrind tool perfcount: "
                                          + (p.stderr.strip().splitlines() or ["no output"])[-1])
        finally:
            obj.unlink(missing_ok=True)

    atomic_write(exe, build, mode=0o755)
    return out
