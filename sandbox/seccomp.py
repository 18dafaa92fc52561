"""The seccomp filter every sandboxed process runs under (compilers, runner and program).

Built with libseccomp (Debian: python3-seccomp) by the *system* interpreter, which is also the
one that runs the in-sandbox runner, exported as BPF once per host into the cache, and handed
to bubblewrap (``--seccomp FD``). Allow by default, deny the families the IOI/CMS sandboxes and
container runtimes deny, plus everything that lets a process reach another one or keep state
across runs:

- other processes: ptrace, process_vm_readv/writev, process_madvise, kcmp, pidfd_getfd;
- kernel attack surface: bpf, io_uring, userfaultfd, perf_event_open, keyrings, modules, kexec;
- namespaces and mounts (unshare, setns, mount API, chroot, pivot_root, open_by_handle_at);
- state that outlives a process: System V IPC and POSIX message queues;
- host settings: clocks, hostname, swap, reboot, acct, quotactl, syslog, ioperm/iopl;
- foreign system-call ABIs (i386 ``int 0x80``, x32): the process is killed (SIGSYS).

Denied calls fail with EPERM so programs that probe (e.g. a runtime checking for io_uring)
fall back cleanly.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"
VERSION = 1

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
    "host settings": ("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
                      "setdomainname", "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog",
                      "ioperm", "iopl", "vhangup", "lookup_dcookie", "fanotify_init", "uselib"),
}


class SeccompUnavailable(RuntimeError):
    pass


def filter_path() -> Path:
    """The compiled BPF filter for this host (built on first use, then cached)."""
    # imported here: this file also runs as a script under the system interpreter (-I)
    from perfalign.common.fileio import atomic_write
    from perfalign.common.paths import cache_root

    rules = Path(__file__).read_bytes()
    key = hashlib.sha256(rules + os.uname().machine.encode()).hexdigest()[:16]
    path = cache_root() / "seccomp" / f"filter-{key}.bpf"
    if path.exists() and path.stat().st_size > 0:
        return path
    if not os.path.exists(SYSTEM_PYTHON):
        raise SeccompUnavailable(f"{SYSTEM_PYTHON} is missing (apt-get install python3 python3-seccomp)")

    def build(tmp: Path) -> None:
        p = subprocess.run([SYSTEM_PYTHON, "-I", __file__, str(tmp)], capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or not tmp.stat().st_size:
            raise SeccompUnavailable(
                "cannot build the sandbox's seccomp filter (Debian/Ubuntu: apt-get install python3-seccomp): "
                + (p.stderr.strip().splitlines() or ["no output"])[-1])

    return atomic_write(path, build, mode=0o644)


def _build(out: str) -> None:
    """Runs under the system interpreter with libseccomp's binding."""
    import errno

    import seccomp  # python3-seccomp

    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # Only the native ABI: i386 and x32 system calls kill the process.
    f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for names in DENIED.values():
        for name in names:
            try:
                f.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (RuntimeError, ValueError, OSError):
                pass  # not a system call on this architecture
    with open(out, "wb") as fh:
        f.export_bpf(fh)


if __name__ == "__main__":
    _build(sys.argv[1])
