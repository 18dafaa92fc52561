"""The deterministic clocks: an instruction count, and cycles estimated from a cache simulation
(docs/sandbox.md, "Deterministic clock").

``Job.clock`` picks the clock: "cpu" (the cgroup's CPU time, the default), "instructions" or
"cycles". With a deterministic clock the program runs under valgrind with perfalign's own tool,
perfcount (sandbox/perfcount.c: the counts cachegrind reports, with every valgrind *client request*
made inert), inside the same sandbox (same mounts, seccomp filter, cgroup), and the runner reads the
counts from valgrind's log, which reaches it over a socket the program cannot write, reopen or forge:

- the log fd is one end of a ``socketpair``: valgrind moves it into its reserved fd range, where
  the program's own system calls on it fail (EBADF); a socket cannot be reopened through
  ``/proc/self/fd`` (ENXIO) and the seccomp filter denies pidfd_getfd and ptrace;
- what the machine pays beyond plain instructions is priced: bytes the kernel moves for the program
  (any call that reads or fills its memory) at the price of the C library's copy, and through the
  cache model under cycles; page faults; costly instruction classes by weight; fast
  strings by their bytes and start-ups; misses in a sequential walk at their own weights
  (``INSTRUCTION_WEIGHTS``, ``FAULT_PAGES``, ``COPY_BYTES``, ``REP_START``, ``CYCLE_WEIGHTS``);
- client requests do nothing (``VALGRIND_NON_SIMD_CALL``, which would run a function on the real
  CPU uncounted; ``VALGRIND_PRINTF``; ``RUNNING_ON_VALGRIND`` answers 0 as natively), whether the
  program was compiled with them or builds them at run time: the capability is gone, not detected.
  A program that tried gets the flag ``valgrind_client_requests_ignored``;
- valgrind has no ``mseal``: perfcount keeps the seals the program asks for and ends the run at a
  call that would change a sealed range (``mprotect``, ``munmap``, ``mremap``, ``mmap`` over it,
  ``madvise`` other than a hint), the calls the kernel refuses there: the probe driver's sealed
  code and GOT hold under a count as natively;
- ``--command-line-only=yes``: no ``.valgrindrc`` or ``VALGRIND_OPTS`` of the program's making;
- every process the program starts would be followed (``--trace-children=yes``), but a count is
  only whole for a process that neither forks nor execs (a forked child starts with a copy of the
  counters; an exec drops the pre-exec counts). So the program may not fork (a second, stacked
  seccomp filter refuses fork, vfork and clone without CLONE_THREAD: EPERM), threads are counted
  with their process, and the log must show exactly one program start ("Command:") and one
  summary, for the process the runner started. Anything else (an exec, a process valgrind did not
  follow, a process killed before its summary) fails the run (RUNTIME_ERROR): work hidden outside
  the count cannot score.

The answer is checked on every counted run, so a program that detects valgrind and skips work
fails its test.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
from dataclasses import dataclass

from . import perfcount

CLOCKS = ("cpu", "instructions", "cycles")
DEFAULT_CLOCK = "cpu"
DETERMINISTIC = ("instructions", "cycles")
VALGRIND = "/usr/bin/valgrind"

# A fixed cache geometry (size,associativity,line bytes), not the host's: "cycles" must not
# depend on which machine measured it. A common x86 desktop/server configuration.
CACHE_GEOMETRY = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8388608, 16, 64)}

# A fast string's miss that continues its walk (perfcount.c, "Streams": the line next to one the
# same execution missed; a fault's zero-fill too) is fetched ahead by the machine; it costs what
# benchmarks/clock_weights.py measures natively for a line a fast copy moves through L2 (L1) and
# through memory (LL), per miss, in plain adds (docs/sandbox.md, "Priced work: copies and streams";
# a pointer chase's misses cost about the fitted weights below there: L2 ~100, memory ~1,300).
STREAM_L1, STREAM_LL = 5.0, 30.0

# The cycles model: cycles = Ir + W_L1 * (I1 + D1 misses) + W_LL * (LL misses, instruction and
# data), a miss in a stream at its own weight (above). W_L1 and W_LL fitted by
# benchmarks/clock_bench.py, section (d) (`--skip slowdown,determinism --problems 20
# --py-problems 3`, 2026-11-26, this 2-core VM): non-negative least squares of the native median CPU
# time (5 repeats) of the 56 C++ solutions of 20 CodeContests-sample problems on their largest test
# against (Ir, L1 misses, LL misses, 1), each row scaled by its CPU time (relative errors); the
# weights are the miss coefficients over Ir's (instruction units). Fit: R^2 0.48, median relative
# error 34%; per-problem Spearman of cycles vs CPU time 0.950 with these weights, 0.925 with
# instructions alone (docs/sandbox.md). A weak fit on a small sample: refit on a bigger one.
CYCLE_WEIGHTS = {"L1": 125.0, "LL": 1220.0, "L1_stream": STREAM_L1, "LL_stream": STREAM_LL}

# What the machine pays that no plain instruction count shows (perfcount.c prices it, with these),
# measured natively on this machine by benchmarks/clock_weights.py (docs/sandbox.md, "Priced work"):
# - an instruction whose class costs an order of magnitude more than a plain one counts as the
#   ordinary instructions it costs in time (x87 transcendental, divide, square root); an iteration
#   of another rep-string instruction (lods, cmps, scas) counts its element's bytes;
# - a page fault (zero-fill, copy-on-write copy, file page) counts as FAULT_PAGES x 4096 ordinary
#   instructions (under cycles, with its zero-fill's 64 data-cache write misses a page, a stream):
#   measured, a fault costs ~4 pages of ordinary instructions (3.8), far above the memset page it
#   replaces;
# - a byte a fast string (`rep movs`, `rep stos`: glibc's large memcpy/memset) moves costs
#   1 / COPY_BYTES instructions (a copy within L1; its misses are the cache model's), and each
#   fast-string instruction executed REP_START (its start-up, paid however few bytes it moves);
# - a byte the kernel moves for the program costs 1 / KERNEL_BYTES (a round trip through a pipe in
#   64 KB writes and reads, over the two bytes it counts: the call's own work included).
INSTRUCTION_WEIGHTS = {"transcendental": 347, "div": 46, "sqrt": 40}
FAULT_PAGES = 4
COPY_BYTES, REP_START, KERNEL_BYTES = 18, 30, 2

# The second line of defence, which needs no list: the same build runs natively beside the count
# (at least NATIVE_REPEATS times, in the same job), and a count that calls a program faster than
# its baseline while the CPU time beside it says slower, beyond the CPU time's own noise, is not a
# label: the flag CONTRADICTED, penalized like every flag the program could have caused
# (common.outcomes.PENALIZED_FLAGS).
NATIVE_REPEATS = 3
CONTRADICTED = "count_contradicts_cpu"

# Time limits under valgrind: limit * SLOWDOWN[clock] + STARTUP_S (valgrind's own start-up,
# 0.4 s for C++, 2.9-4.5 s for Python 3's start-up under it, more on a loaded host). The slowdowns are above
# benchmarks/clock_bench.py's "slowdown vs native" figures (C++ work 32x, Python 20x under
# instructions; ~80x overall with the cache simulation), with margin.
SLOWDOWN = {"instructions": 50.0, "cycles": 100.0}
STARTUP_S = 10.0
# valgrind's own memory (translation cache, shadow structures) over the program's limit.
MEMORY_MB = 256

# Backends that run the program under valgrind (the docker image has no valgrind yet: the
# clock falls back to cpu there, flagged "clock_fallback:backend_docker").
BACKENDS = ("bwrap", "local-unsafe")

# The program's environment under a deterministic clock: the same hash seed every run (CPython
# randomizes str hashes per process: dict/set layouts, and so the count, would move).
PROGRAM_ENV = {"PYTHONHASHSEED": "0"}

# A log larger than this (the program printing through VALGRIND_PRINTF) fails the run.
MAX_LOG_BYTES = 1 << 20

_LINE = re.compile(r"^==(\d+)== (.*)$")
# perfcount's summary (perfcount.c): one per process
_SUMMARY = re.compile(r"^perfcount: Ir (\d+) I1mr (\d+) ILmr (\d+) D1mr (\d+) D1mw (\d+) DLmr (\d+) DLmw (\d+) "
                      r"clreq (\d+) kbytes (\d+) wextra (\d+) faults (\d+) repbytes (\d+) repstarts (\d+) "
                      r"D1s (\d+) DLs (\d+)$")


class ClockMismatch(ValueError):
    """Two measurements in different clocks were to be compared, or a dataset would mix clocks:
    a count is never compared with seconds (one line, raised where the mix is found)."""


def check_clock(clock: str) -> str:
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    return clock


def valgrind_missing() -> str | None:
    """Why a deterministic clock cannot run here, or None."""
    if not (os.path.exists(VALGRIND) and shutil.which("valgrind")):
        return "valgrind is not installed (Debian/Ubuntu: apt-get install valgrind; scripts/setup.sh does it)"
    try:
        perfcount.tool_dir()  # built once, then found in the cache
    except perfcount.ToolUnavailable as e:
        return str(e)
    return None


def fallback_reason(language: str, toolchain: str, compile_flags: tuple[str, ...], env: dict[str, str]) -> str | None:
    """Why a deterministic clock does not apply to this job (it falls back to cpu, flagged)."""
    if language == "java":
        return "java_jit"  # the JIT's own work and timing-driven tiering: counts say little
    if toolchain != "default":
        return "mpi" if toolchain.startswith("mpi") else f"toolchain_{toolchain}"
    if "-fopenmp" in compile_flags or "OMP_NUM_THREADS" in env:
        return "openmp"  # parallel speed-up is wall time, which an instruction count cannot see
    if language == "python2":
        return "python2"  # the bullseye root's own loader: not validated under valgrind
    return None


def valgrind_binary() -> str:
    """valgrind itself. Debian's /usr/bin/valgrind is a wrapper script that changes the program's
    environment (LD_LIBRARY_PATH=/usr/lib/debug, GLIBCXX_FORCE_NEW=1) before it runs the real
    binary: the program must see the same environment under every clock."""
    real = VALGRIND + ".bin"
    return real if os.path.exists(real) else VALGRIND


def valgrind_prefix(clock: str) -> list[str]:
    """valgrind and its options; the runner appends ``--log-fd=N -- argv`` (and the environment
    ``valgrind_env``)."""
    opts = [valgrind_binary(), f"--tool={perfcount.TOOL}", "--command-line-only=yes", "--vgdb=no",
            "--trace-children=yes", "--error-exitcode=0",
            # valgrind's exit hooks run guest code that ends in a client request, which perfcount drops
            "--run-libc-freeres=no", "--run-cxx-freeres=no",
            f"--cache-sim={'yes' if clock == 'cycles' else 'no'}", f"--fault-pages={FAULT_PAGES}",
            f"--copy-bytes={COPY_BYTES}", f"--rep-start={REP_START}", f"--kernel-bytes={KERNEL_BYTES}",
            *(f"--w-{k}={w}" for k, w in INSTRUCTION_WEIGHTS.items())]
    if clock == "cycles":
        opts += [f"--{k}={','.join(map(str, v))}" for k, v in CACHE_GEOMETRY.items()]
    return opts


def valgrind_env() -> dict[str, str]:
    """Where valgrind's launcher finds perfcount (built on first use): the directory is mounted at
    the same path, read-only."""
    return {"VALGRIND_LIB": str(perfcount.tool_dir())}


def scaled_limits(limits, clock: str):
    """The job's limits under valgrind: time scaled by the clock's slowdown, valgrind's memory added."""
    return dataclasses.replace(limits, time_s=limits.time_s * SLOWDOWN[clock] + STARTUP_S,
                               memory_mb=limits.memory_mb + MEMORY_MB)


@dataclass
class Counts:
    instructions: int
    l1_misses: int = 0
    ll_misses: int = 0
    client_requests: int = 0  # attempted, and dropped (perfcount.c)
    faults: int = 0  # page faults, priced in ``instructions``
    l1_stream: int = 0  # of the data misses, those in a stream (within l1_misses, ll_misses)
    ll_stream: int = 0


def cycles(c: Counts) -> float:
    """The cycles model (CYCLE_WEIGHTS)."""
    w = CYCLE_WEIGHTS
    return (c.instructions + w["L1"] * (c.l1_misses - c.l1_stream) + w["LL"] * (c.ll_misses - c.ll_stream)
            + w["L1_stream"] * c.l1_stream + w["LL_stream"] * c.ll_stream)


def native_cpu_s(tests) -> tuple[float | None, float]:
    """(the summed median native CPU time of the tests run beside a count, its relative noise: the
    largest (max - min) / median of a test's repeats), or (None, 0) when any test has none."""
    total, noise = 0.0, 0.0
    for t in tests:
        runs = sorted(t.native_cpu_times_s)
        if not runs:
            return None, 0.0
        med = runs[len(runs) // 2]
        total += med
        noise = max(noise, (runs[-1] - runs[0]) / med if med > 0 else 0.0)
    return total, noise


def count_contradicts_cpu(count_speedup: float, cpu_speedup: float, cpu_noise: float) -> bool:
    """The count says the candidate is faster than its baseline, the CPU time measured beside it
    says slower, beyond the CPU times' noise (each side's relative spread, added): the program is
    faster only under the count."""
    return count_speedup > 1.0 and cpu_speedup * (1.0 + cpu_noise) < 1.0


def parse_log(text: str, pid: int) -> tuple[Counts | None, str]:
    """The counts of process ``pid`` from perfcount's log, or (None, why the count is not whole)."""
    starts: list[int] = []
    summaries: dict[int, Counts] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue  # "--pid--" lines (valgrind's notes)
        p, body = int(m.group(1)), m.group(2).strip()
        if body.startswith("Command:"):
            starts.append(p)
            continue
        if body.startswith("perfcount: sealed:"):  # perfcount ended the program (perfcount.c, sealed mappings)
            return None, f"the program tried to change memory it had sealed ({body.split(':', 2)[2].strip()})"
        f = _SUMMARY.match(body)
        if f:
            if p in summaries:
                return None, "two instruction-count summaries for one process"
            # Ir includes the priced work (kbytes, wextra, faults, repbytes, repstarts)
            ir, i1, il, d1r, d1w, dlr, dlw, clreq, _kb, _wx, faults, _rb, _rs, d1s, dls = map(int, f.groups())
            summaries[p] = Counts(ir, i1 + d1r + d1w, il + dlr + dlw, clreq, faults, d1s, dls)
    if len(starts) > 1:
        return None, (f"the program started {len(starts)} programs under valgrind (it may not exec: "
                      "the count of a replaced program is lost)")
    if starts != [pid]:
        return None, "valgrind did not start the program"
    if set(summaries) != {pid}:
        return None, "a process ended without valgrind's instruction-count summary (killed, or not followed)"
    return summaries[pid], ""
