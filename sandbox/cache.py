"""On-disk caches: compiled programs (keyed by language, flags, toolchain and source hash),
objects of trusted C++ translation units (keyed by the exact bytes the compiler sees, its
command and its version) and the per-host precompiled header for <bits/stdc++.h>."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

from filelock import FileLock

from perfalign.common.paths import cache_root

from .toolchains import CPP_FLAGS, toolchain_id
from .types import CompileInfo, Language


def _key(*parts: str) -> str:
    """sha256 of the parts, each ended by a NUL."""
    return hashlib.sha256(b"".join(p.encode("utf-8", "surrogatepass") + b"\0" for p in parts)).hexdigest()


def compile_key(language: Language, flags: tuple[str, ...], source: str) -> str:
    return _key(language.value, toolchain_id(language), " ".join(flags), source)


# Total size of the compile cache before least-recently-used entries are pruned.
DEFAULT_MAX_CACHE_BYTES = 4 << 30
_PRUNE_EVERY = 200  # commits between size checks


class CompileCache:
    """Entries are directories ``<root>/<kind>/<key[:2]>/<key>`` holding the program files
    and ``info.json``; they appear atomically (built aside, then renamed). A hit touches the
    entry; the total size is kept under ``max_bytes`` by pruning least-recently-used entries."""

    kind = "compile"

    def __init__(self, root: Path | None = None, max_bytes: int = DEFAULT_MAX_CACHE_BYTES) -> None:
        self.root = (root or cache_root()) / self.kind
        self.root.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._commits = 0
        self.prune()

    def prune(self) -> None:
        """Remove least-recently-used entries until the cache fits ``max_bytes``."""
        entries = []
        total = 0
        for d in self.root.glob("??/*"):
            try:
                size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
                used = (d / "info.json").stat().st_mtime
            except OSError:
                continue
            entries.append((used, size, d))
            total += size
        for used, size, d in sorted(entries):
            if total <= self.max_bytes:
                break
            shutil.rmtree(d, ignore_errors=True)
            total -= size

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> tuple[Path, CompileInfo] | None:
        d = self.path(key)
        try:
            info = json.loads((d / "info.json").read_text())
        except (OSError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.utime(d / "info.json")  # recency for LRU pruning
        return d, CompileInfo(ok=info["ok"], seconds=info["seconds"], message=info["message"], cached=True)

    def staging(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        d = Path(tempfile.mkdtemp(prefix=".stage-", dir=self.root))
        os.chmod(d, 0o755)
        return d

    def commit(self, key: str, staged: Path, info: CompileInfo) -> Path:
        (staged / "info.json").write_text(json.dumps({"ok": info.ok, "seconds": info.seconds, "message": info.message}))
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(staged, final)
        except OSError:  # another worker committed the same key first: keep theirs
            shutil.rmtree(staged, ignore_errors=True)
        self._commits += 1
        if self._commits % _PRUNE_EVERY == 0:
            self.prune()
        return final


# ---------------------------------------------------------------------------- trusted unit objects
# A C++ build whose units are compiled one by one (sandbox/privatelink.py) reuses the object of a
# TRUSTED unit (a problem's driver) across programs. The policy, all of it here:
# - only trusted units (no ``exports``) are cached: a candidate's own unit never is;
# - an object is compiled in a sandbox run of its own that holds only the trusted units and the
#   headers the job ships (never a candidate's bytes), and the host, not the sandbox, writes it
#   into the cache under the key below; the key is the hash of everything that compile saw;
# - a build gets a read-only copy of the object; the program's run never sees it at all.
UNIT_KEY_VERSION = "unit-object-1"
# Total size of the unit-object cache before least-recently-used entries are pruned.
DEFAULT_MAX_UNIT_CACHE_BYTES = 512 << 20
MAX_UNIT_OBJECT_BYTES = 64 << 20  # the compile's own file-size limit (compile.MAX_PROGRAM_MB) bounds it too
UNIT_OBJECT = "unit.o"


def unit_key(compile_argv: tuple[str, ...], unit: str, sources: dict[str, str]) -> str:
    """The key of one unit's object: the compiler's identity (``g++ --version``), its exact
    command (compiler, flags, include dirs), the unit's guest path (``__FILE__``, ``.file``) and
    the bytes of every file its compile could read from the job (the unit and the headers
    shipped with it, ``sources``: guest name -> text). System headers follow the toolchain."""
    return _key(UNIT_KEY_VERSION, toolchain_id(Language.CPP), "\0".join(compile_argv), unit,
                *(x for name in sorted(sources) for x in (name, sources[name])))


def is_object_file(path: Path, max_bytes: int) -> bool:
    """A regular file (not a link), an ELF relocatable object, under ``max_bytes``."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return False
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    # e_ident: \x7fELF; e_type (little endian on every host we build for) 1 = ET_REL
    return len(head) == 18 and head[:4] == b"\x7fELF" and head[16:18] == b"\x01\x00"


class UnitCache(CompileCache):
    """Objects of trusted units: ``<root>/units/<key[:2]>/<key>/unit.o`` (read-only) and
    ``info.json`` (``ok`` false: the unit does not compile on its own; the build compiles it
    with the rest, as before). Written only by the host (:meth:`store`); counts its hits and
    compiles, so a caller can see what a build reused."""

    kind = "units"

    def __init__(self, root: Path | None = None, max_bytes: int = DEFAULT_MAX_UNIT_CACHE_BYTES) -> None:
        super().__init__(root, max_bytes)
        self._count_lock = threading.Lock()
        self.hits = 0
        self.compiled = 0

    def lookup(self, key: str) -> Path | bool | None:
        """The object of ``key``; False when the unit is known not to compile on its own; None
        when it was never compiled."""
        hit = self.get(key)
        if hit is None:
            return None
        d, info = hit
        obj = d / UNIT_OBJECT
        if not info.ok:
            return False
        if not obj.is_file():  # a damaged entry: compile again
            shutil.rmtree(d, ignore_errors=True)
            return None
        with self._count_lock:
            self.hits += 1
        return obj

    def store(self, key: str, obj: Path | None, seconds: float = 0.0, message: str = "") -> Path | bool:
        """Commit the object a trusted compile produced (checked to be a plain ELF object, copied,
        made read-only), or None: the unit does not compile on its own. Returns what
        :meth:`lookup` returns from now on."""
        ok = obj is not None and is_object_file(obj, MAX_UNIT_OBJECT_BYTES)
        staged = self.staging()
        if ok:
            shutil.copyfile(obj, staged / UNIT_OBJECT)
            os.chmod(staged / UNIT_OBJECT, 0o444)
        final = self.commit(key, staged, CompileInfo(ok=ok, seconds=round(seconds, 4), message=message[-2000:]))
        with self._count_lock:
            self.compiled += 1
        return final / UNIT_OBJECT if ok else False

    def lock(self, key: str) -> FileLock:
        """Held while a key is compiled: two builds of the same driver compile it once."""
        return FileLock(self.root / f".{key}.lock")


def pch_dir() -> Path | None:
    """A directory holding bits/stdc++.h.gch built with exactly CPP_FLAGS, or None.

    Built once per host and toolchain (~12 s), then reused: it halves the compile time of a
    typical contest file. g++ silently ignores a PCH whose flags differ, so the flags are
    part of the directory key.
    """
    if os.environ.get("PERFALIGN_NO_PCH"):
        return None
    key = hashlib.sha256((toolchain_id(Language.CPP) + " ".join(CPP_FLAGS)).encode()).hexdigest()[:16]
    d = cache_root() / "pch" / key
    gch = d / "bits" / "stdc++.h.gch"
    if gch.exists():
        return d
    header = _find_stdcpp_header()
    if header is None:
        return None
    (cache_root() / "pch").mkdir(parents=True, exist_ok=True)
    with FileLock(cache_root() / "pch" / f"{key}.lock"):
        if gch.exists():
            return d
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        (tmp / "bits").mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["g++", *CPP_FLAGS, "-x", "c++-header", str(header),
                            "-o", str(tmp / "bits" / "stdc++.h.gch")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        for sub in (tmp, tmp / "bits"):
            os.chmod(sub, 0o755)
        os.chmod(tmp / "bits" / "stdc++.h.gch", 0o644)
        os.rename(tmp, d)
    return d


def _find_stdcpp_header() -> Path | None:
    try:
        major = subprocess.run(["g++", "-dumpversion"], capture_output=True, text=True).stdout.strip().split(".")[0]
    except OSError:
        return None
    candidates = sorted(Path("/usr/include").glob(f"*/c++/{major}/bits/stdc++.h")) + \
        sorted(Path("/usr/include/c++").glob(f"{major}*/bits/stdc++.h"))
    return candidates[0] if candidates else None
