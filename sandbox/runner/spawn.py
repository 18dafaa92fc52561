"""Starting the program: its limits, its filters, its stdio, and the clocks' zero."""
import ctypes
import os
import resource

from .system import _RESET_SIGNALS, WALL, signal

_RLIMITS = (
    ("as_bytes", resource.RLIMIT_AS),
    ("fsize_bytes", resource.RLIMIT_FSIZE),
    ("nproc", resource.RLIMIT_NPROC),
    ("stack_bytes", resource.RLIMIT_STACK),
    ("nofile", resource.RLIMIT_NOFILE),
)


_SOFT_SET = []  # the limits dict whose soft limits (all but CPU) this runner holds itself


def _soft_limits(lim):
    """Lower our own *soft* limits so a posix_spawn child inherits them; returns what to restore.

    Used when cgroups (memory, pids), the wall guard and the capped tmpfs mounts do the hard
    enforcement: a program that raises its soft limits back gains nothing. posix_spawn is a
    vfork+exec (~1 ms) where a fork of this interpreter costs several ms per test.
    Every limit but CPU time is set once per job and kept by the runner, which writes no file,
    holds a few descriptors and runs one program at a time; the CPU limit is set around each
    spawn (the runner's own CPU time adds up over the job): 2 system calls a test instead of 21.
    """
    if not _SOFT_SET or _SOFT_SET[0] is not lim:
        _lower_all(lim, _RLIMITS)
        _lower(resource.RLIMIT_CORE, 0)
        _SOFT_SET[:] = [lim]
    return [_lower(resource.RLIMIT_CPU, lim["cpu_s"])] if lim.get("cpu_s") is not None else []


def _lower(res, val):
    """Lower the soft limit ``res`` to ``val`` (at most the hard limit); returns (res, soft, hard) before."""
    soft, hard = resource.getrlimit(res)
    resource.setrlimit(res, (int(val) if hard == resource.RLIM_INFINITY else min(int(val), hard), hard))
    return res, soft, hard


def _lower_all(lim, rlimits):
    for key, res in rlimits:
        if lim.get(key) is not None:
            _lower(res, lim[key])


PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_SET_THP_DISABLE = 41


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _install_filter(bpf):
    """Stack a seccomp filter (raw BPF) on this process; raises OSError on failure."""
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot install the clock's seccomp filter")


def _no_huge_pages():
    """No transparent huge pages for this process and what it execs, whatever the host's setting:
    one fault would zero or copy 512 pages and a counted clock prices a fault by the page. The
    clock's filter refuses PR_SET_THP_DISABLE to the program, so it cannot turn them back on."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot disable transparent huge pages for the clock")


def _child_limits(lim, hard):
    """The job's limits in the forked child: hard ones (without cgroups, the only bound) or soft."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if not hard:
        _lower_all(lim, _RLIMITS + (("cpu_s", resource.RLIMIT_CPU),))
        return
    cpu = lim.get("cpu_s")
    if cpu is not None:  # soft: SIGXCPU at the limit, hard: SIGKILL one second later
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    for key, res in _RLIMITS:
        val = lim.get(key)
        if val is None:
            continue
        try:
            resource.setrlimit(res, (int(val), int(val)))
        except (ValueError, OSError):
            soft, hard_lim = resource.getrlimit(res)
            if hard_lim != resource.RLIM_INFINITY:
                resource.setrlimit(res, (min(int(val), hard_lim), hard_lim))


def _spawn(job, fd_in, fd_out, fd_err, log_fd=None, at_start=lambda: None):
    """Start the program with the three fds as its stdio; returns (pid, error message).

    ``at_start`` is called once nothing but the program's start is left: right before
    posix_spawn, or while the runner's forked child is parked after its set-up (fds, limits,
    filters), so the clocks read there count everything the program does and none of the
    runner's own work (docs/sandbox.md: a null program's CPU-time SD 0.74 -> 0.12 ms).
    With ``log_fd`` (a deterministic clock) the program runs under valgrind, whose log goes to
    that fd, with the clock's no-fork filter stacked on the sandbox's."""
    argv, env = job["argv"], job.get("env") or {}
    clock = job.get("clock")
    if clock:
        argv = list(clock["prefix"]) + ["--log-fd=%d" % log_fd, "--"] + list(argv)
    if not job.get("hard_limits", True) and not clock:
        actions = [(os.POSIX_SPAWN_DUP2, fd, i) for i, fd in enumerate((fd_in, fd_out, fd_err))]
        saved = _soft_limits(job["limits"])
        at_start()  # posix_spawn runs no Python in the child
        try:
            return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True,
                                  setsigdef=_RESET_SIGNALS), None
        except OSError as exc:
            return None, "exec failed: %r" % (exc,)
        finally:
            for res, soft, hard in reversed(saved):
                resource.setrlimit(res, (soft, hard))
    # Without cgroups the rlimits are the only bound: fork and make them hard in the child.
    # An exec failure travels back on a close-on-exec pipe, never through the program's stderr.
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.close(go_w)
            os.setsid()
            for i, fd in enumerate((fd_in, fd_out, fd_err)):
                os.dup2(fd, i)
            for sig in _RESET_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            _child_limits(job["limits"], job.get("hard_limits", True))
            if clock:
                os.set_inheritable(log_fd, True)
                _no_huge_pages()
                _install_filter(bytes.fromhex(clock["no_fork_bpf"]))
            os.write(w, b"R")  # set up: park until the runner has read its clocks
            if os.read(go_r, 1) != b"G":
                os._exit(127)
            os.execve(argv[0], argv, env)
        except BaseException as exc:
            try:
                os.write(w, ("exec failed: %r" % (exc,)).encode()[:1000])
            finally:
                os._exit(127)
    os.close(w)
    os.close(go_r)
    with os.fdopen(r, "rb") as f:
        err = f.read(1)
        if err == b"R":
            err = b""
            at_start()
            os.write(go_w, b"G")
        os.close(go_w)
        err += f.read()
    if err:
        os.waitpid(pid, WALL)
        return None, err.decode("utf-8", "replace")
    return pid, None


def _aim_oom_killer(pid):
    # The program, not the runner, is the OOM killer's first choice.
    try:  # os.open/os.write: a buffered open() costs ~30 us more per run (4 extra system calls)
        fd = os.open("/proc/%d/oom_score_adj" % pid, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)
    except OSError:
        pass
