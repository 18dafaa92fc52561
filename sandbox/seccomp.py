"""The seccomp filter every sandboxed process runs under (compilers, runner and program).

Built with libseccomp (Debian: python3-seccomp) by the *system* interpreter, which is also the
one that runs the in-sandbox runner, exported as BPF once per host into the cache, and handed
to bubblewrap (``--seccomp FD``); the Docker backend gets the same policy as a JSON profile
(``policy()``).

**Default deny.** Only the system calls in ``ALLOWED`` pass, some only with the argument values
in ``ARGUMENTS``; any other call fails with ENOSYS (as if this kernel did not have it: libc
and runtimes fall back cleanly). The list was derived by running, under a logging build of this
filter (``PERFALIGN_SECCOMP_TRACE=1``: SCMP_ACT_LOG instead of the refusal, read back from the
kernel log), the compilers, the runner and real programs: the bundled samples (C++, Python 3,
Python 2, Java), the ParEval (serial, OpenMP, MPI) and PolyBench probe harness runs and the
KernelBench model server (torch); the logging build adds what a run needed beyond the base set
(so far: sendmmsg and mknodat by Open MPI's orterun, mbind by torch's OpenMP runtime). No real
program reached for the page-cache calls (the logging build logs them instead of refusing).
Families that must never be allowed fail with EPERM
(``DENIED``), among them:

- other processes: ptrace, process_vm_readv/writev, process_madvise, kcmp, pidfd_getfd;
- kernel attack surface: bpf, io_uring, userfaultfd, perf_event_open, keyrings, modules, kexec;
- namespaces and mounts (unshare, setns, mount API, chroot, pivot_root, open_by_handle_at);
- state that outlives a process: System V IPC and POSIX message queues, and the host's page
  cache: a program could keep answer bits in the cache state of a read-only system file (read a
  page to set, evict to clear, probe without reading): fadvise64, readahead, mincore,
  cachestat, preadv2/pwritev2 with RWF_NOWAIT, and madvise advice that evicts (MADV_PAGEOUT,
  MADV_COLD) or reads ahead (MADV_WILLNEED) are refused;
- host settings: clocks, hostname, swap, reboot, acct, quotactl, syslog, ioperm/iopl;
- foreign system-call ABIs (i386 ``int 0x80``, x32): the process is killed (SIGSYS).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"
TRACE_ENV = "PERFALIGN_SECCOMP_TRACE"  # "1": the logging build (derivation of ALLOWED only)

DENIED = {
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
                        "pidfd_getfd"),
    "bpf": ("bpf",),
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "userfaultfd": ("userfaultfd",),
    "perf_event_open": ("perf_event_open",),
    "keyrings": ("add_key", "request_key", "keyctl"),
    "kernel modules and kexec": ("init_module", "finit_module", "delete_module", "kexec_load",
                                 "kexec_file_load"),
    "namespaces and mounts": ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "mount_setattr",
                              "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
                              "open_by_handle_at", "name_to_handle_at"),
    "System V IPC and message queues": ("shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv",
                                        "msgctl", "semget", "semop", "semctl", "semtimedop", "mq_open",
                                        "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
                                        "mq_getsetattr"),
    "page cache": ("fadvise64", "readahead", "mincore", "cachestat", "remap_file_pages"),
    "host settings": ("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
                      "setdomainname", "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog",
                      "ioperm", "iopl", "vhangup", "lookup_dcookie", "fanotify_init", "uselib"),
}

# What the sandbox's processes need (see the module docstring for how it was derived).
ALLOWED = {
    "files": ("read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "open", "openat",
              "close", "close_range", "lseek", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs",
              "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd",
              "chdir", "fchdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "unlink",
              "unlinkat", "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "truncate",
              "ftruncate", "fallocate", "fsync", "fdatasync", "dup", "dup2", "dup3", "pipe", "pipe2", "fcntl",
              "ioctl", "flock", "umask", "utimensat", "memfd_create", "sendfile", "copy_file_range",
              "select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl",
              "epoll_wait", "epoll_pwait", "eventfd2"),
    "memory": ("brk", "mmap", "munmap", "mremap", "mprotect", "msync", "membarrier", "mbind", "mseal"),
    "processes and threads": ("fork", "vfork", "execve", "exit", "exit_group", "wait4", "waitid", "kill",
                              "tgkill", "tkill", "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid",
                              "getegid", "getgroups", "getresuid", "getresgid", "setsid", "setpgid", "getpgid",
                              "getpgrp", "getsid", "arch_prctl", "set_tid_address", "set_robust_list",
                              "rseq", "futex", "sched_yield", "sched_getaffinity", "sched_setaffinity",
                              "sched_getparam", "sched_getscheduler", "sched_get_priority_max",
                              "sched_get_priority_min", "getpriority", "setpriority", "getrlimit", "setrlimit",
                              "prlimit64", "getrusage", "times", "sysinfo", "uname", "pidfd_open", "capget"),
    "signals and time": ("restart_syscall", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
                         "rt_sigtimedwait",
                         "sigaltstack", "alarm", "setitimer", "getitimer", "timer_create", "timer_settime",
                         "timer_gettime", "timer_delete", "clock_gettime", "clock_getres", "clock_nanosleep",
                         "nanosleep", "gettimeofday", "time"),
    "sockets and FIFOs (Open MPI's local transport)": ("socket", "socketpair", "bind", "listen", "accept", "accept4",
                                                       "connect", "getsockname", "getpeername", "setsockopt",
                                                       "getsockopt", "sendto", "recvfrom", "sendmsg", "sendmmsg",
                                                       "recvmsg", "shutdown",
                                                       "mknodat", "mknod"),
    "misc": ("getrandom", "getcpu"),
}

# Allowed only with some argument values: ("in", argument index, allowed values), ("clear",
# argument index, bits that must all be clear) or ("unless", index, value, index2, value2): any
# call whose argument ``index`` is not ``value``, and those where argument ``index2`` is ``value2``.
# madvise: advice on the process's own memory only. Observed: MADV_DONTNEED (glibc malloc, the
# JVM, g++); the allocators' and runtimes' other own-memory advice kept: NORMAL 0, RANDOM 1,
# SEQUENTIAL 2, FREE 8, DONTFORK 10, DOFORK 11, HUGEPAGE 14, NOHUGEPAGE 15, DONTDUMP 16, DODUMP 17,
# WIPEONFORK 18, KEEPONFORK 19; and POPULATE_READ 22, which the deterministic clock's valgrind tool
# makes (sandbox/perfcount.c, "File pages") under this same filter: it reads the range in, as
# touching each page would (reading sets a page cache bit, which pread does too; the probes and the
# evictions are what the filter refuses). Never: WILLNEED 3 (readahead of file pages), REMOVE 9,
# MERGEABLE/UNMERGEABLE 12/13 (KSM: merged pages are a cross-process channel), COLD 20 and
# PAGEOUT 21 (evict file pages), POPULATE_WRITE 23, COLLAPSE 25 and whatever comes later.
MADV_OK = (0, 1, 2, 4, 8, 10, 11, 14, 15, 16, 17, 18, 19, 22)
RWF_NOWAIT = 0x8  # preadv2/pwritev2: "fail with EAGAIN rather than wait" = "is this page cached?"
# clone: no new namespaces (bwrap also has --disable-userns); clone3 passes its flags in memory
# a filter cannot read: ENOSYS makes libc fall back to clone.
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
NS_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
# prctl: every option but making the process dumpable again. The probe's driver seals its memory
# (mseal) and makes itself non-dumpable at start-up: /proc/self/mem writes through page
# protections and seals, and a non-dumpable process's mem file belongs to root.
PR_SET_DUMPABLE = 4
ARGUMENTS = {
    "madvise": ("in", 2, MADV_OK),
    "prctl": ("unless", 0, PR_SET_DUMPABLE, 1, 0),
    "preadv2": ("clear", 5, RWF_NOWAIT),
    "pwritev2": ("clear", 5, RWF_NOWAIT),
    "clone": ("clear", 0, sum(NS_FLAGS)),
}
ENOSYS_CALLS = ("clone3",)
# Calls newer than Debian 12's libseccomp (2.5.4), added by number where the name is unknown to it
SYSCALL_NUMBERS = {"x86_64": {"mseal": 462}}


class SeccompUnavailable(RuntimeError):
    pass


def allowed_names() -> set[str]:
    return {n for names in ALLOWED.values() for n in names}


def filter_path() -> Path:
    """The compiled BPF filter for this host (built on first use, then cached)."""
    trace = os.environ.get(TRACE_ENV) == "1"
    return _cached_bpf("filter", "trace" if trace else "enforce", trace,
                       "the sandbox's seccomp filter (Debian/Ubuntu: apt-get install python3-seccomp)")


def _cached_bpf(name: str, mode: str, trace: bool, what: str) -> Path:
    """A filter of this file's rules as BPF, built once per host by this file under the system
    interpreter (``mode``: its command-line argument) and cached."""
    # imported here: this file also runs as a script under the system interpreter (-I)
    from perfalign.common.fileio import atomic_write
    from perfalign.common.paths import cache_root

    key = hashlib.sha256(Path(__file__).read_bytes() + os.uname().machine.encode()
                         + (b"trace" if trace else b"")).hexdigest()[:16]
    path = cache_root() / "seccomp" / f"{name}-{key}{'-trace' if trace else ''}.bpf"
    if path.exists() and path.stat().st_size > 0:
        return path
    if not os.path.exists(SYSTEM_PYTHON):
        raise SeccompUnavailable(f"{SYSTEM_PYTHON} is missing (apt-get install python3 python3-seccomp)")

    def build(tmp: Path) -> None:
        p = subprocess.run([SYSTEM_PYTHON, "-I", __file__, str(tmp), mode], capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or not tmp.stat().st_size:
            raise SeccompUnavailable(f"cannot build {what}: " + (p.stderr.strip().splitlines() or ["no output"])[-1])

    return atomic_write(path, build, mode=0o644)


# The deterministic clock's second filter, stacked on this one by the runner for the measured
# program only (sandbox/clock.py): no new processes (a forked child's count would hold a copy of
# its parent's, a child killed before its summary none): fork, vfork and clone without
# CLONE_THREAD fail with EPERM; threads pass. And no huge pages: the runner disables transparent
# huge pages for the program (one fault would zero 512 pages, priced as one), whatever the host's
# setting, and no prctl(PR_SET_THP_DISABLE) may undo it; hugetlbfs mappings (MAP_HUGETLB, memfd
# MFD_HUGETLB, SHM_HUGETLB) fail with EPERM. Default allow: the first filter still decides the rest.
CLONE_THREAD = 0x00010000
NO_FORK = ("fork", "vfork")
PR_SET_THP_DISABLE = 41
HUGETLB_FLAGS = {"mmap": (3, 0x40000), "memfd_create": (1, 0x4), "shmget": (2, 0x800)}  # (argument, bit)


def no_fork_filter() -> bytes:
    """The deterministic clock's stacked filter as BPF (built once per host, cached)."""
    return _cached_bpf("nofork", "nofork", False, "the deterministic clock's seccomp filter").read_bytes()


def rules() -> list[tuple[str, str, tuple]]:
    """The policy as (action, system call, argument conditions), action "allow", "eperm" or
    "enosys"; a condition is (index, "eq", value) or (index, "masked_eq", mask, value). Several
    rules for one call: any one that matches decides; a condition may also be (index, "ne", value).
    Everything else: ENOSYS (the default).
    The bwrap filter (_build) and the Docker profile (backends/docker.py) are both made from it."""
    out = [("eperm", name, ()) for names in DENIED.values() for name in names]
    out += [("enosys", name, ()) for name in ENOSYS_CALLS]
    out += [("allow", name, ()) for name in sorted(allowed_names())]
    for name, (kind, index, value, *then) in ARGUMENTS.items():
        if kind == "in":
            out += [("allow", name, ((index, "eq", v),)) for v in value]
        elif kind == "unless":
            out += [("allow", name, ((index, "ne", value),)),
                    ("allow", name, ((index, "eq", value), (then[0], "eq", then[1])))]
        else:  # allowed when none of the bits in value are set
            out.append(("allow", name, ((index, "masked_eq", value, 0),)))
    return out


def _build(out: str, mode: str) -> None:
    """Runs under the system interpreter with libseccomp's binding. ``mode``: "enforce", "trace"
    (the logging build) or "nofork" (the deterministic clock's stacked filter)."""
    import errno

    import seccomp  # python3-seccomp

    eperm, enosys = seccomp.ERRNO(errno.EPERM), seccomp.ERRNO(errno.ENOSYS)
    if mode == "nofork":
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in NO_FORK:
            f.add_rule(eperm, name)
        f.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
        f.add_rule(eperm, "prctl", seccomp.Arg(0, seccomp.EQ, PR_SET_THP_DISABLE))
        for name, (index, bit) in HUGETLB_FLAGS.items():
            f.add_rule(eperm, name, seccomp.Arg(index, seccomp.MASKED_EQ, bit, bit))
    else:
        trace = mode == "trace"
        f = seccomp.SyscallFilter(defaction=seccomp.LOG if trace else enosys)
        # Only the native ABI: i386 and x32 system calls kill the process.
        f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        actions = {"allow": seccomp.ALLOW, "eperm": eperm, "enosys": enosys}
        for action, name, conds in rules():
            if trace and name in DENIED["page cache"]:
                continue  # the logging build shows which real programs reach for the page cache
            args = [seccomp.Arg(c[0], seccomp.MASKED_EQ, c[2], c[3]) if c[1] == "masked_eq"
                    else seccomp.Arg(c[0], seccomp.NE if c[1] == "ne" else seccomp.EQ, c[2]) for c in conds]
            number = SYSCALL_NUMBERS.get(os.uname().machine, {}).get(name)
            for call in (name, number) if number else (name,):
                try:
                    f.add_rule(actions[action], call, *args)
                    break
                except (RuntimeError, ValueError, OSError):
                    pass  # not a system call on this architecture (or unknown to this libseccomp)
    with open(out, "wb") as fh:
        f.export_bpf(fh)


if __name__ == "__main__":
    _build(sys.argv[1], sys.argv[2])
