"""bubblewrap: unprivileged uid, no network, read-only root and system dirs, capped /tmp and
/dev/shm, empty environment (bwrap's own too), the runner as PID 1 of its own pid namespace,
a seccomp filter, die-with-parent, no nested user namespaces."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess

from .. import seccomp
from .base import Backend, BackendUnavailable, Mount, ProcessHandle, RunnerHandle, Slot, runner_path

# System directories the programs need, read-only. /etc is NOT bound whole (shadow, secrets):
# only what the toolchains read.
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
_ETC_FILES = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/ld.so.cache", "/etc/ld.so.conf",
              "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group")
GUEST_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in _ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args


class BwrapBackend(Backend):
    name = "bwrap"
    isolated = True
    host_paths = True

    @classmethod
    @functools.lru_cache(maxsize=1)
    def _probe(cls) -> str | None:
        if not shutil.which("bwrap"):
            return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
        if not shutil.which("setpriv"):
            return "setpriv is missing (Debian/Ubuntu: apt-get install util-linux)"
        if not os.path.exists("/usr/bin/python3"):
            return "the sandbox runner needs /usr/bin/python3 (apt-get install python3)"
        try:
            bpf = seccomp.filter_path()
        except seccomp.SeccompUnavailable as e:
            return str(e)
        with open(bpf, "rb") as fh:
            argv = cls._launch_prefix(65534, ["--seccomp", str(fh.fileno())]) + \
                ["--", "/usr/bin/python3", "-I", "-S", "-c", "print('ok')"]
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={},
                                   pass_fds=(fh.fileno(),))
            except (OSError, subprocess.SubprocessError) as e:
                return f"bubblewrap failed to start: {e}"
        if p.returncode != 0 or p.stdout.strip() != "ok":
            return ("bubblewrap cannot create an unprivileged sandbox here "
                    f"(user namespaces disabled?): {p.stderr.strip()[:300]}")
        return None

    @classmethod
    def check(cls) -> None:
        if reason := cls._probe():
            raise BackendUnavailable(reason)

    @staticmethod
    def _launch_prefix(uid: int, extra: list[str] | None = None) -> list[str]:
        # Never uid 0 inside: bwrap started by root maps the sandbox to real root.
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if os.geteuid() == 0 else []
        # --as-pid-1: the runner itself is PID 1 (signals from inside are not delivered to it,
        # no bwrap init holding host pipes). The caller starts bwrap with an empty environment.
        return drop + [
            "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--clearenv", "--as-pid-1",
            *_system_binds(),
            "--proc", "/proc", "--dev", "/dev",
            *(extra or []),
            "--remount-ro", "/dev", "--remount-ro", "/",
        ]

    def guest_oom_file(self, slot: Slot) -> str | None:
        return "/run/oom" if slot.cgroup else None

    def guest_cpu_file(self, slot: Slot) -> tuple[str, str] | None:
        cpu = slot.cgroup.cpu_file if slot.cgroup else None
        return ("/run/cpu", cpu[1]) if cpu else None

    def launch(self, spec: dict, mounts: list[Mount], slot: Slot) -> RunnerHandle:
        tmp_bytes = int(spec.pop("tmp_bytes"))
        # Every writable mount is a size-capped tmpfs (the root and /dev are remounted read-only).
        extra = ["--size", str(tmp_bytes), "--tmpfs", "/tmp", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm",
                 "--ro-bind", str(runner_path()), "/run/runner.py"]
        for m in mounts:
            extra += ["--bind" if m.writable else "--ro-bind", str(m.host), m.guest]
        if slot.cgroup:
            extra += ["--ro-bind", str(slot.cgroup.oom_file), "/run/oom"]
            cpu = slot.cgroup.cpu_file
            if cpu:
                extra += ["--ro-bind", str(cpu[0]), "/run/cpu"]
        extra += [a for k, v in GUEST_ENV.items() for a in ("--setenv", k, v)] + ["--chdir", "/tmp"]
        bpf = open(seccomp.filter_path(), "rb")
        extra += ["--seccomp", str(bpf.fileno())]
        argv = self._launch_prefix(slot.uid, extra) + ["--", "/usr/bin/python3", "-I", "-S", "/run/runner.py", "-"]
        if slot.cgroup:
            argv = slot.cgroup.attach_prefix() + argv

        def release() -> None:
            bpf.close()
            if slot.cgroup:
                slot.cgroup.kill_all()

        try:
            # env={}: bwrap's own environment is empty, so nothing of the caller's (HF_TOKEN...)
            # exists anywhere in the sandbox.
            return ProcessHandle(argv, spec, env={}, pass_fds=(bpf.fileno(),), on_close=release)
        except BaseException:
            release()
            raise
