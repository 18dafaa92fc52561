"""On-disk caches: compiled programs (keyed by language, flags, toolchain and source hash)
and the per-host precompiled header for <bits/stdc++.h>."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from filelock import FileLock

from perfalign.common.paths import cache_root

from .languages import CPP_FLAGS, toolchain_id
from .types import CompileInfo, Language


def compile_key(language: Language, flags: tuple[str, ...], source: str) -> str:
    h = hashlib.sha256()
    for part in (language.value, toolchain_id(language), " ".join(flags), source):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


# Total size of the compile cache before least-recently-used entries are pruned.
DEFAULT_MAX_CACHE_BYTES = 4 << 30
_PRUNE_EVERY = 200  # commits between size checks


class CompileCache:
    """Entries are directories ``<root>/compile/<key[:2]>/<key>`` holding the program files
    and ``info.json``; they appear atomically (built aside, then renamed). A hit touches the
    entry; the total size is kept under ``max_bytes`` by pruning least-recently-used entries."""

    def __init__(self, root: Path | None = None, max_bytes: int = DEFAULT_MAX_CACHE_BYTES) -> None:
        self.root = (root or cache_root()) / "compile"
        self.root.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._commits = 0
        self.prune()

    def prune(self) -> int:
        """Remove least-recently-used entries until the cache fits ``max_bytes``; returns how many."""
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
        removed = 0
        for used, size, d in sorted(entries):
            if total <= self.max_bytes:
                break
            shutil.rmtree(d, ignore_errors=True)
            total -= size
            removed += 1
        return removed

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> tuple[Path, CompileInfo] | None:
        d = self.path(key)
        try:
            info = json.loads((d / "info.json").read_text())
        except (OSError, ValueError):
            return None
        try:
            os.utime(d / "info.json")  # recency for LRU pruning
        except OSError:
            pass
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
