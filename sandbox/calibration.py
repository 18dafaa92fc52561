"""Per-host calibration: CPU time of a fixed reference program, stored with every result so
runs from different machines can be normalized (runtime / reference_cpu_s)."""
from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import platform
import statistics
from pathlib import Path
from typing import Callable

from perfalign.common.fileio import atomic_write_json
from perfalign.common.paths import cache_root

from .types import Job, Language, Limits, RunResult, TestCase

# Integer xorshift work, no I/O, no allocation: ~0.1 s at -O2 on a 2020s x86 core.
REFERENCE_CPP = r"""
#include <cstdio>
#include <cstdint>
int main() {
    uint64_t x = 88172645463325252ULL, s = 0;
    for (int i = 0; i < 40000000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; s += x & 1023; }
    std::printf("%llu\n", (unsigned long long)s);
    return 0;
}
"""
REPEATS = 5
VERSION = 2  # 2: CPU time from the cgroup counter (every process)


def boot_id() -> str:
    """This boot's id: caches of machine-dependent measurements are keyed by it."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


@functools.cache
def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def host_id(node: str | None = None, model: str | None = None) -> str:
    """The name measured data gives its host: the node's name and its CPU model. A node name alone
    repeats across machines (every VM of this workplace is ``vm``: an Intel Xeon one day, an AMD EPYC
    the next, measuring the same Python 8-20 % apart), so "measured here" needs both to match."""
    return f"{node or platform.node()} [{model or cpu_model()}]"


def calibration_host(calibration: dict | None) -> str | None:
    """The ``host_id`` of the machine a calibration was measured on (None where it is not recorded)."""
    cal = calibration or {}
    return host_id(cal["host"], cal["cpu_model"]) if cal.get("host") and cal.get("cpu_model") else None


def reference_job() -> Job:
    return Job(REFERENCE_CPP, Language.CPP, (TestCase(),), Limits(time_s=10), REPEATS)


def measure_calibration(backend: str, run_reference: Callable[[], RunResult]) -> dict:
    """Measured once per boot and backend (``run_reference`` runs :func:`reference_job`),
    then read back from the cache directory."""
    path = cache_root() / "calibration" / f"{backend}-{boot_id()}-v{VERSION}.json"
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    res = run_reference()
    times = res.tests[0].cpu_times_s if res.ok and res.tests else []
    cal = {
        "reference_cpu_s": statistics.median(times) if times else None,
        "reference_cpu_times_s": times,
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "backend": backend,
        "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "error": None if times else f"reference program failed: {res.verdict} {res.message}",
    }
    if times:  # never cache a failed calibration
        atomic_write_json(path, cal)
    return cal


def host_scale(dataset_hosts, dataset_reference_cpu_s: float | None, calibration: dict | None,
               host: str | None = None) -> float:
    """Factor that converts CPU times measured on the dataset's host(s) to this host: this host's
    reference CPU time / the dataset's. 1.0 when the dataset was measured on this host (``host_id``:
    a bare node name from data written before it never matches, and is converted), or when either
    figure is missing (nothing to convert with)."""
    here = host or host_id()
    now = (calibration or {}).get("reference_cpu_s")
    if not dataset_hosts or here in dataset_hosts or not now or not dataset_reference_cpu_s:
        return 1.0
    return float(now) / float(dataset_reference_cpu_s)
