"""Memory and process-count limits through cgroups, where this host lets us write them.

Probed once at start-up: cgroup v2 (a unified hierarchy with the memory and pids controllers
enabled) or v1 (separate writable memory and pids hierarchies, as on hybrid hosts). Slots are
long-lived (attaching a fresh cgroup costs ~5 ms): one per worker, reused for every run.
Without a writable hierarchy the runner falls back to rlimits.
"""
from __future__ import annotations

import contextlib
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
    # CPU accounting of every task in the slot: v1 cpuacct (cpuacct.usage, ns) or v2 cpu.stat (usec)
    cpuacct: Path | None = None
    # v1 cpuset parent (v2: the unified dir, when the cpuset controller could be enabled)
    cpuset: Path | None = None


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
    with contextlib.suppress(OSError):
        controllers = (unified / "cgroup.controllers").read_text()
    if "memory" in controllers.split() and "pids" in controllers.split():
        sub = unified / GROUP
        for want in ("+memory +pids", "+cpuset"):  # cpuset is optional
            with contextlib.suppress(OSError):
                sub.mkdir(exist_ok=True)
                (unified / "cgroup.subtree_control").write_text(want)
                (sub / "cgroup.subtree_control").write_text(want)
        if _writable_child(unified, "memory.max"):
            cpuset = sub if _writable_child(unified, "cpuset.cpus") else None
            # cpu.stat's usage_usec exists in every v2 cgroup, controller enabled or not
            return remove_stale(CgroupLayout(2, sub, sub, sub, cpuacct=sub, cpuset=cpuset))
    mem, pids = ROOT / "memory", ROOT / "pids"
    if _writable_child(mem, "memory.limit_in_bytes") and _writable_child(pids, "pids.max"):
        acct = next((ROOT / d for d in ("cpuacct", "cpu,cpuacct", "cpuacct,cpu")
                     if _writable_child(ROOT / d, "cpuacct.usage")), None)
        cpuset = ROOT / "cpuset" if _writable_child(ROOT / "cpuset", "cpuset.cpus") else None
        return remove_stale(CgroupLayout(1, mem / GROUP, pids / GROUP, v2_kill / GROUP if v2_kill else None,
                                         cpuacct=acct / GROUP if acct else None,
                                         cpuset=cpuset / GROUP if cpuset else None))
    return None


def remove_stale(layout: CgroupLayout) -> CgroupLayout:
    """Remove slot cgroups left by processes that died without cleaning up (kill -9); returns ``layout``."""
    for parent in {layout.memory, layout.pids, layout.kill, layout.cpuacct, layout.cpuset} - {None}:
        for d in parent.glob("*-*"):
            pid = d.name.split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    d.rmdir()
    return layout


@dataclass
class CgroupSlot:
    """A long-lived cgroup (per worker slot) with memory and pids limits."""

    layout: CgroupLayout
    name: str
    dirs: list[Path] = field(default_factory=list)

    @classmethod
    def create(cls, layout: CgroupLayout, name: str) -> "CgroupSlot":
        dirs: list[Path] = []
        for parent in (layout.memory, layout.pids, layout.kill, layout.cpuacct, layout.cpuset):
            if parent and parent / name not in dirs:
                dirs.append(parent / name)
        if layout.version == 1 and layout.cpuset:
            _inherit_cpuset(layout.cpuset)
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
        slot = cls(layout, name, dirs)
        if layout.version == 1 and layout.cpuset:
            _inherit_cpuset(layout.cpuset / name)
        return slot

    @property
    def cpu_file(self) -> tuple[Path, str] | None:
        """(host path, unit) of the CPU counter that charges every task of the slot."""
        acct = self.layout.cpuacct
        if acct is None:
            return None
        if self.layout.version == 2:
            return acct / self.name / "cpu.stat", "usec"
        return acct / self.name / "cpuacct.usage", "ns"

    def oom_kills(self) -> int:
        """The slot's OOM-kill counter, read on the host side."""
        with contextlib.suppress(OSError, ValueError):
            for line in self.oom_file.read_text().splitlines():
                key, _, val = line.partition(" ")
                if key == "oom_kill":
                    return int(val)
        return 0

    def set_cpus(self, count: int | None) -> bool:
        """Confine the slot to ``count`` CPUs (None: all the parent has). False if not possible."""
        if self.layout.cpuset is None:
            return count is None
        d = self.layout.cpuset / self.name
        try:
            parent = _parse_cpus((d.parent / ("cpuset.cpus.effective" if self.layout.version == 2
                                              else "cpuset.cpus")).read_text())
            if not parent:
                return count is None
            # CPUs this process may run on first: a benchmark worker pinned to its own cores
            # (grpo's Dask workers) confines its runs there, not to the parent's first CPUs
            mine = [c for c in parent if c in os.sched_getaffinity(0)] or parent
            chosen = parent if count is None else mine[:max(1, count)]
            (d / "cpuset.cpus").write_text(",".join(map(str, chosen)))
            return count is None or len(chosen) == count
        except OSError:
            return count is None

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
                    with contextlib.suppress(OSError):
                        os.kill(p, signal.SIGKILL)
                time.sleep(0.002)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()


def _parse_cpus(text: str) -> list[int]:
    cpus: list[int] = []
    for part in text.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            cpus += range(int(a), int(b) + 1)
        elif part:
            cpus.append(int(part))
    return cpus


def _inherit_cpuset(d: Path) -> None:
    """A new v1 cpuset starts empty (no task can join it): copy the parent's cpus and mems."""
    d.mkdir(parents=True, exist_ok=True)
    for f in ("cpuset.cpus", "cpuset.mems"):
        with contextlib.suppress(OSError):
            if not (d / f).read_text().strip():
                (d / f).write_text((d.parent / f).read_text().strip())


def _try_write(path: Path, value: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(value)
