"""On-disk caches: compiled programs (keyed by language, flags, toolchain and source hash)
and the per-host precompiled header for <bits/stdc++.h>."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .languages import CPP_FLAGS, toolchain_id
from .types import CompileInfo, Language


def cache_root() -> Path:
    """PERFALIGN_CACHE_DIR, else /var/cache/perfalign for root, else ~/.cache/perfalign.

    Compiled programs are mounted into sandboxes that run as an unprivileged uid, so when we
    are root every directory on the path must be world-traversable (/root is not).
    """
    env = os.environ.get("PERFALIGN_CACHE_DIR")
    if env:
        root = Path(env)
    elif os.geteuid() == 0:
        root = Path("/var/cache/perfalign")
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfalign"
    root = root.resolve()
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
    if os.geteuid() == 0:
        for d in (root, *root.parents):
            if not os.stat(d).st_mode & 0o001:
                raise PermissionError(
                    f"cache directory {root}: {d} is not world-traversable, so the sandbox's "
                    f"unprivileged uid cannot reach compiled programs; set PERFALIGN_CACHE_DIR elsewhere")
    return root


@contextlib.contextmanager
def file_lock(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def compile_key(language: Language, flags: tuple[str, ...], source: str) -> str:
    h = hashlib.sha256()
    for part in (language.value, toolchain_id(language), " ".join(flags), source):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class CompileCache:
    """Entries are directories ``<root>/compile/<key[:2]>/<key>`` holding the program files
    and ``info.json``; they appear atomically (built aside, then renamed)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_root()) / "compile"
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> tuple[Path, CompileInfo] | None:
        d = self.path(key)
        try:
            info = json.loads((d / "info.json").read_text())
        except (OSError, ValueError):
            return None
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
    with file_lock(cache_root() / "pch" / f"{key}.lock"):
        if gch.exists():
            return d
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        (tmp / "bits").mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["g++", *CPP_FLAGS, "-x", "c++-header", str(header), "-o", str(tmp / "bits" / "stdc++.h.gch")],
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
