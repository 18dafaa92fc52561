from __future__ import annotations

import abc
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..cgroups import CgroupSlot

RUNNER = Path(__file__).resolve().parent.parent / "runner.py"


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

    index: int
    uid: int
    cgroup: CgroupSlot | None = None


@dataclass
class Outcome:
    returncode: int
    stdout: bytes
    stderr: bytes


class Backend(abc.ABC):
    name: str = ""
    isolated: bool = True

    @classmethod
    @abc.abstractmethod
    def check(cls) -> None:
        """Raise BackendUnavailable with a clear reason if this host cannot run the backend."""

    @abc.abstractmethod
    def execute(self, spec: dict, mounts: list[Mount], slot: Slot, timeout: float) -> Outcome:
        """Run the runner with ``spec`` (guest paths) and ``mounts``; return its raw output."""

    def guest_oom_file(self, slot: Slot) -> str | None:
        return None

    def close(self) -> None:
        """Release per-worker resources (containers, cgroups)."""


def run_runner(argv: list[str], spec: dict, timeout: float) -> Outcome:
    """Start a runner process, feed the job spec, collect its framed output."""
    try:
        p = subprocess.run(argv, input=json.dumps(spec).encode(), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return Outcome(-9, e.stdout or b"", (e.stderr or b"") + b"\nrunner: sandbox timed out")
    return Outcome(p.returncode, p.stdout, p.stderr)
