from __future__ import annotations

import abc
import contextlib
import functools
import hashlib
import marshal
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..cgroups import CgroupSlot
from ..shipping import bundle

RUNNER_PACKAGE = "perfalign.sandbox.runner"


@functools.cache
def runner_path() -> Path:
    """The runner (``sandbox/runner/``, shipped as one file) where the sandbox's unprivileged uids
    can read it: under the cache root (world-traversable, common.paths), named by its content.
    The package's own files may sit where they cannot reach them (a venv under /root, a 0700
    temporary folder)."""
    from perfalign.common.fileio import atomic_write_bytes
    from perfalign.common.paths import cache_root

    data = bundle(RUNNER_PACKAGE).encode()
    path = cache_root() / "runner" / f"runner-{hashlib.sha256(data).hexdigest()[:16]}.py"
    if path.is_file() and path.read_bytes() == data:
        return path
    return atomic_write_bytes(path, data, mode=0o644)


class BackendUnavailable(RuntimeError):
    """The backend cannot run on this host; the message says what to install or change."""


@dataclass(frozen=True)
class Mount:
    guest: str
    host: Path
    writable: bool = False


@dataclass
class Slot:
    """One concurrent worker: its own uid (RLIMIT_NPROC is per uid) and cgroup."""

    uid: int
    cgroup: CgroupSlot | None = None


class RunnerHandle:
    """A started runner: its framed stdout is read by the host as it arrives (bounded memory)
    from the descriptor ``_fd``.

    ``fileno()`` is polled for readability; ``read(n)`` returns up to n bytes (b"" at EOF).
    """

    _fd: int

    def fileno(self) -> int:
        return self._fd

    def read(self, n: int) -> bytes:
        return os.read(self._fd, n)

    def readinto(self, buf: memoryview) -> int:
        """Read into ``buf`` (0 at EOF): large outputs land in one buffer, no chunk copies."""
        return os.readv(self._fd, [buf])

    def kill(self) -> None:
        """Stop the runner and everything it started (called on host-side deadlines)."""

    def wait(self) -> int:
        """Wait for the runner to exit; its exit status (negative: killed by that signal)."""
        return 0

    def stderr_tail(self) -> str:
        return ""

    def close(self) -> None:
        """Release what the launch acquired (temporary files, containers, cgroup leftovers)."""


class ProcessHandle(RunnerHandle):
    """A runner started as a local process (bwrap, local-unsafe)."""

    def __init__(self, argv: list[str], spec: dict, *, env: dict[str, str] | None = None,
                 pass_fds: tuple[int, ...] = (), on_close=None) -> None:
        self._err = tempfile.TemporaryFile()  # a file, not a pipe: a chatty runner cannot block
        self._on_close = on_close
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                     env=env if env is not None else None, pass_fds=pass_fds,
                                     start_new_session=True)
        with contextlib.suppress(OSError):  # the runner reads the whole spec before it writes anything
            self.proc.stdin.write(marshal.dumps(spec, 4))  # sandbox/runner/main.py: the spec format
            self.proc.stdin.close()
        self._fd = self.proc.stdout.fileno()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def wait(self) -> int:
        return self.proc.wait()

    def stderr_tail(self) -> str:
        try:
            self._err.seek(0, os.SEEK_END)
            size = self._err.tell()
            self._err.seek(max(0, size - 2000))
            return self._err.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.kill()
            self.proc.wait()
            self.proc.stdout.close()
        finally:
            self._err.close()
            if self._on_close:
                self._on_close()


class Backend(abc.ABC):
    name: str = ""
    isolated: bool = True
    # The runner reads the host's own paths (bwrap binds them, local-unsafe uses them): a job's box
    # may then live on the host's tmpfs. A container engine resolves binds in its own mount
    # namespace, where /dev/shm may be another filesystem.
    host_paths: bool = False

    @classmethod
    @abc.abstractmethod
    def check(cls) -> None:
        """Raise BackendUnavailable with a clear reason if this host cannot run the backend."""

    @abc.abstractmethod
    def launch(self, spec: dict, mounts: list[Mount], slot: Slot) -> RunnerHandle:
        """Start the runner with ``spec`` (guest paths) and ``mounts``; stream its frames."""

    def guest_oom_file(self, slot: Slot) -> str | None:
        return None

    def guest_cpu_file(self, slot: Slot) -> tuple[str, str] | None:
        """(guest path, "ns" | "usec") of the sandbox cgroup's CPU counter, if the runner can read one."""
        return None

    def close(self) -> None:
        """Release per-worker resources (containers, cgroups)."""
