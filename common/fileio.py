"""File I/O: atomic writes (the one way perfalign replaces a file) and the one content hash of
a folder's files (``hash_files``).

The data go to a hidden temp file in the target's folder (same file system, so the rename is
atomic), are fsync'd, then renamed over the target: a reader, or a run after a crash (kill -9 at
any moment), sees the whole old file or the whole new one, never a torn one. The temp file is
removed when the write fails; one left by a killed process matches ``.<name>.*.tmp``. The file
gets the permissions a plain ``open()`` would give it (0666 less the umask), not mkstemp's 0600:
a teammate, or a worker running as another user, can read what a run wrote.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None], mode: int | None = None) -> Path:
    """Replace ``path`` with what ``write(tmp)`` writes to the temp path it is given (a writer
    that opens the file itself, e.g. ``pyarrow.parquet.write_table``). ``mode``: the file's
    permission bits (default: 0o666 less the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~umask() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def umask() -> int:
    """The process's umask, read without changing it (os.umask sets it, racing other threads)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int | None = None) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_bytes(data), mode)


def atomic_write_text(path: str | os.PathLike, text: str, mode: int | None = None) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), mode)


def atomic_write_json(path: str | os.PathLike, data: Any, mode: int | None = None, **dumps: Any) -> Path:
    """``data`` as JSON (``dumps``: keyword arguments of json.dumps, e.g. indent)."""
    return atomic_write_text(path, json.dumps(data, **dumps), mode)


def hash_files(h: Any, path: str | os.PathLike, subfolders: bool = True) -> None:
    """Feed the hash ``h`` the files of ``path`` (a file: itself) in sorted order, each as its path
    relative to ``path`` (a file: its name) and its content's SHA-256; hidden files and folders
    are left out. ``subfolders``: also the files below subfolders (False: a model folder's own
    files, not its trainer/ checkpoints)."""
    root = Path(path)
    if root.is_file():
        files = [root]
    else:
        found = root.rglob("*") if subfolders else root.iterdir()
        files = sorted(f for f in found if f.is_file()
                       and not any(part.startswith(".") for part in f.relative_to(root).parts))
    for f in files:
        h.update(str(f.name if f == root else f.relative_to(root)).encode())
        with open(f, "rb") as fh:
            h.update(hashlib.file_digest(fh, "sha256").digest())
