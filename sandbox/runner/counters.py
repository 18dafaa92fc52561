"""The CPU clocks the runner reads: the sandbox cgroup's counters and its own rusage."""
import os
import resource

_COUNTER_FDS = {}  # path -> fd: a cgroup file stays open, re-read with pread (per run, 4 reads)


def _read_counter(path, key):
    """A cgroup counter: the first integer of the file, or the ``key`` line of a keyed file."""
    if not path:
        return 0
    try:
        fd = _COUNTER_FDS.get(path)
        if fd is None:
            fd = _COUNTER_FDS[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        text = os.pread(fd, 4096, 0)
        if not key:
            return int(text.split()[0])
        for line in text.splitlines():
            k, _, val = line.partition(b" ")
            if k == key.encode():
                return int(val)
    except (OSError, ValueError, IndexError):
        pass
    return 0


class CpuCounter:
    """CPU seconds charged to the sandbox's cgroup (every task in it), or None without one."""

    def __init__(self, path, fmt):
        self.path = path
        # "ns": cgroup v1 cpuacct.usage; "usec": v2 cpu.stat's usage_usec line
        self.key, self.scale = ("usage_usec", 1e-6) if fmt == "usec" else (None, 1e-9)

    def read(self):
        return _read_counter(self.path, self.key) * self.scale if self.path else None


def _cpu(who=resource.RUSAGE_SELF):
    """User + system CPU seconds of this runner (RUSAGE_SELF) or of its reaped children."""
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime
