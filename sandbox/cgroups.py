"""Memory and process-count limits through cgroups, where this host lets us write them.

Probed once at start-up: cgroup v2 (a unified hierarchy with the memory and pids controllers
enabled) or v1 (separate writable memory and pids hierarchies, as on hybrid hosts). Slots are
long-lived (attaching a fresh cgroup costs ~5 ms): one per worker, reused for every run.
Without a writable hierarchy the runner falls back to rlimits.
"""
from __future__ import annotations

import functools
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(os.environ.get("PERFALIGN_CGROUP_ROOT", "/sys/fs/cgroup"))
GROUP = "perfalign"


@dataclass(frozen=True)
class CgroupLayout:
    version: int  # 1 or 2
    memory: Path  # parent dir for memory cgroups
    pids: Path    # parent dir for pids cgroups (== memory on v2)
    kill: Path | None = None  # a v2 parent where cgroup.kill works (also on hybrid hosts)


def _writable_child(parent: Path, probe_file: str) -> bool:
    test = parent / GROUP / f"probe-{os.getpid()}"
    try:
        test.mkdir(parents=True, exist_ok=True)
        ok = (test / probe_file).exists() and os.access(test / probe_file, os.W_OK)
        test.rmdir()
        return ok
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def probe() -> CgroupLayout | None:
    """The writable cgroup layout of this host, or None (rlimits only)."""
    if os.environ.get("PERFALIGN_NO_CGROUPS"):
        return None
    unified = ROOT if (ROOT / "cgroup.controllers").exists() else ROOT / "unified"
    v2_kill = unified if _writable_child(unified, "cgroup.kill") else None
    controllers = ""
    try:
        controllers = (unified / "cgroup.controllers").read_text()
    except OSError:
        pass
    if "memory" in controllers.split() and "pids" in controllers.split():
        try:
            sub = unified / GROUP
            sub.mkdir(exist_ok=True)
            (unified / "cgroup.subtree_control").write_text("+memory +pids")
            (sub / "cgroup.subtree_control").write_text("+memory +pids")
        except OSError:
            pass
        if _writable_child(unified, "memory.max"):
            layout = CgroupLayout(2, unified / GROUP, unified / GROUP, unified / GROUP)
            remove_stale(layout)
            return layout
    mem, pids = ROOT / "memory", ROOT / "pids"
    if _writable_child(mem, "memory.limit_in_bytes") and _writable_child(pids, "pids.max"):
        layout = CgroupLayout(1, mem / GROUP, pids / GROUP, v2_kill / GROUP if v2_kill else None)
        remove_stale(layout)
        return layout
    return None


def remove_stale(layout: CgroupLayout) -> int:
    """Remove slot cgroups left by processes that died without cleaning up (kill -9)."""
    removed = 0
    for parent in {layout.memory, layout.pids, layout.kill} - {None}:
        for d in parent.glob("*-*"):
            pid = d.name.split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                try:
                    d.rmdir()
                    removed += 1
                except OSError:
                    pass
    return removed


@dataclass
class CgroupSlot:
    """A long-lived cgroup (per worker slot) with memory and pids limits."""

    layout: CgroupLayout
    name: str
    dirs: list[Path] = field(default_factory=list)

    @classmethod
    def create(cls, layout: CgroupLayout, name: str) -> "CgroupSlot":
        dirs = [layout.memory / name]
        if layout.pids != layout.memory:
            dirs.append(layout.pids / name)
        if layout.kill and layout.kill not in (layout.memory, layout.pids):
            dirs.append(layout.kill / name)
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
        return cls(layout, name, dirs)

    @property
    def oom_file(self) -> Path:
        d = self.layout.memory / self.name
        return d / ("memory.events" if self.layout.version == 2 else "memory.oom_control")

    def set_limits(self, memory_bytes: int, pids: int) -> None:
        mem = self.layout.memory / self.name
        pid = self.layout.pids / self.name
        if self.layout.version == 2:
            (mem / "memory.max").write_text(str(memory_bytes))
            swap = mem / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            # memsw must stay >= limit: lower order depends on direction, so raise memsw first.
            memsw = mem / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                _try_write(memsw, "-1")
            (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if memsw.exists():
                _try_write(memsw, str(memory_bytes))
        (pid / "pids.max").write_text(str(pids))

    def attach_prefix(self) -> list[str]:
        """argv prefix that moves the launched process into this slot, then execs the rest."""
        writes = "; ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs)
        return ["/bin/sh", "-c", f'{writes} && exec "$@"', "sh"]

    def kill_all(self) -> None:
        """SIGKILL whatever is left in the slot (v2 cgroup.kill where available)."""
        for d in self.dirs:
            kill = d / "cgroup.kill"
            if kill.exists():
                _try_write(kill, "1")
        for d in self.dirs:
            for _ in range(100):
                try:
                    pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.002)

    def pids(self) -> list[int]:
        out: list[int] = []
        for d in self.dirs:
            try:
                out += [int(p) for p in (d / "cgroup.procs").read_text().split()]
            except OSError:
                pass
        return sorted(set(out))

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            try:
                d.rmdir()
            except OSError:
                pass


def _try_write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass
