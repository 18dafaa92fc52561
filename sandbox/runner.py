"""In-sandbox runner: starts each execution of the program, measures it, reports it.

Runs *inside* the isolation boundary with the system interpreter in isolated mode (stdlib
only). One runner per submission amortizes the sandbox start-up over all tests and repeats.

The program is an adversary. What keeps the runner out of its reach (bwrap backend):
- the runner is PID 1 of the sandbox's pid namespace: signals from inside the namespace
  (SIGKILL/SIGSTOP included) are not delivered to it; it is non-dumpable, so the program cannot
  ptrace it, read its memory or environment, or duplicate its file descriptors (the host's
  result pipe) with pidfd_getfd; a seccomp filter blocks ptrace-like syscalls outright;
- the program's CPU time is read from the sandbox cgroup's CPU counter, which charges every
  process and thread as it runs (reaped or not, SIGCHLD ignored or not), minus the runner's own;
- after every execution, every other process of the namespace is killed (kill(-1) as PID 1)
  and reaped before the counter is read, and the writable directories are emptied: each test
  and repeat starts from a clean state;
- the program gets only its own test's input (an already open file descriptor; input files have
  unguessable names in a directory that cannot be listed) and an unnamed output file.

Protocol: the job spec, a dict in ``marshal`` format (version 4; it comes from the host, never
from the program), on stdin (or in the file named by argv[1]); on stdout one frame per
execution: a JSON header line, then ``out_len`` bytes of the program's stdout, then ``err_len``
bytes of its stderr, and finally ``{"done": true}``. Output is sent for the first repeat of a
test and for any repeat whose output differs from it (``same_as_first`` says which). The host
judges; expected outputs never enter the sandbox.
"""
import ctypes
import marshal
import math
import os
import resource
import select
import stat
import sys
import time

# Every job starts a fresh interpreter: the modules a job may not need are imported where they
# are used (json, hashlib, socket and shutil cost ~20 ms of a job's ~85 ms start-up here), and
# signals come from the C module: ``signal`` wraps it in enums (enum's import: ~4 ms a job).
try:
    import _signal as signal
except ImportError:  # pragma: no cover - CPython always has it
    import signal
try:
    from _json import encode_basestring_ascii as _quote  # what json.dumps uses for a string
except ImportError:  # pragma: no cover - CPython always has it
    def _quote(text):
        import json
        return json.dumps(text)

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
WALL = 0x40000000  # __WALL: also reap clone() children whose exit signal is not SIGCHLD
O_TMPFILE = getattr(os, "O_TMPFILE", 0o20200000)
# Every signal we ignore is reset to default in the program (SIG_IGN survives exec).
_RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGINT, signal.SIGTERM,
                  signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGTTOU,
                  signal.SIGTTIN, signal.SIGTSTP)


def _prctl(option, value):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:  # pragma: no cover - prctl is always there on Linux
        pass


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


# ------------------------------------------------------------------ killing and reaping

def _reap_all(block):
    """Reap every child (clone children too). With ``block``, until none is left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, WALL | (0 if block else os.WNOHANG))
        except ChildProcessError:
            return
        except InterruptedError:  # pragma: no cover
            continue
        if pid == 0:
            return


def _descendants(root):
    """Pids whose parent chain reaches ``root`` (used when we are not PID 1)."""
    parent = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(b")") + 2:].split()  # comm may hold spaces and parentheses
        parent[int(name)] = int(fields[1])
    out = []
    for pid in parent:
        p, seen = pid, 0
        while p in parent and seen < 4096:
            p = parent[p]
            seen += 1
            if p == root:
                out.append(pid)
                break
    return out


def _kill_everything_else():
    """SIGKILL every process the program left, then reap them all."""
    me = os.getpid()
    if me == 1:
        # PID 1 of our own namespace: kill(-1) reaches every other process in it, and every
        # orphan is re-parented to us, so reaping until ECHILD leaves nothing behind.
        for _ in range(100):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break
            _reap_all(block=False)
            time.sleep(0.0005)
        _reap_all(block=True)
        return
    # Not PID 1 (local-unsafe, or a container whose init is someone else): we are a
    # subreaper, so orphans come to us; walk /proc for the rest.
    for _ in range(50):
        pids = _descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_all(block=False)
        time.sleep(0.001)
    _reap_all(block=False)


def _empty_dir(path):
    """Remove everything inside ``path`` (the program may have chmod-ed things to 000)."""
    try:
        entries = os.listdir(path)
    except OSError:
        return True
    ok = True
    for name in entries:
        p = os.path.join(path, name)
        try:
            if stat.S_ISDIR(os.lstat(p).st_mode):
                _remove_tree(p)
            else:
                os.unlink(p)
        except OSError:
            ok = False
    return ok


def _remove_tree(path):
    """Remove the directory ``path`` and everything below it, at any depth. The program may nest
    directories past PATH_MAX and past Python's recursion limit (os.walk and shutil.rmtree
    raised RecursionError at ~1000 levels and took the runner down: SANDBOX_ERROR, the
    infrastructure's fault, for a program's doing). One level at a time by a relative chdir: no
    recursion, no path longer than one name, one descriptor open. Every process of the program
    is dead by now, so the tree holds still."""
    def enter(name):  # into it; its files go, its subdirectories are returned (listed once)
        os.chmod(name, 0o700)
        os.chdir(name)
        subdirs = []
        for entry in os.listdir("."):
            if stat.S_ISDIR(os.lstat(entry).st_mode):
                subdirs.append(entry)
            else:
                os.unlink(entry)
        return subdirs

    home = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.chdir(os.path.dirname(path) or "/")
        top = os.path.basename(path)
        stack = [(top, enter(top))]  # per level: its name, its subdirectories left
        while stack:
            name, subdirs = stack[-1]
            if subdirs:
                sub = subdirs.pop()
                stack.append((sub, enter(sub)))
            else:  # empty now: up, and remove it
                os.chdir("..")
                os.rmdir(name)
                stack.pop()
    finally:
        os.fchdir(home)
        os.close(home)


# ------------------------------------------------------------------ starting the program

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


class _LogReader:
    """The runner's end of valgrind's log socket, drained while the program runs (bounded)."""

    def __init__(self, sock, cap):
        self.sock, self.cap = sock, cap
        self.data = bytearray()
        self.eof = False
        self.overflow = False
        sock.setblocking(False)

    def fileno(self):
        return self.sock.fileno()

    def drain(self):
        """What has arrived (non-blocking); under ``finish``'s timeout, all of it."""
        while not self.eof:
            try:
                chunk = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the socket's error, or finish's timeout
                chunk = b""
            if not chunk:
                self.eof = True
                return
            if len(self.data) + len(chunk) > self.cap:
                self.overflow = True
                chunk = chunk[:max(0, self.cap - len(self.data))]
            self.data += chunk

    def finish(self):
        """Everything left (every writer is dead by now: EOF comes)."""
        self.sock.settimeout(5.0)  # blocking, at most 5 s a read
        self.drain()
        return bytes(self.data).decode("utf-8", "replace")


def _wait(job, pid, counter, cpu_base, self_base, log=None):
    """Wait for the program; stop it at the CPU limit or the wall-clock guard.

    Returns (timed_out, cpu_exceeded). The CPU check covers every process of the program,
    so a multi-threaded or multi-process program is stopped near the limit, not at the guard.
    """
    lim = job["limits"]
    guard = float(lim["wall_s"])
    cpu_limit = lim.get("time_s")
    t0 = time.monotonic()
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        draining = [log] if log is not None else []
        if draining:
            poller.register(log.fileno(), select.POLLIN)

        def exited(timeout_s):
            """Whether the program exited within ``timeout_s`` (draining valgrind's log meanwhile)."""
            end = time.monotonic() + timeout_s
            while True:
                events = poller.poll(max(0.0, end - time.monotonic()) * 1000.0)
                if any(fd == pidfd for fd, _ in events):
                    return True
                if not events:
                    return False
                if draining:
                    draining[0].drain()
                    if draining[0].eof:
                        poller.unregister(draining.pop().fileno())
                elif time.monotonic() >= end:
                    return False

        first = min(guard, float(cpu_limit)) if (cpu_limit and counter.path) else guard
        if _FRAMES is not None and _FRAMES.parts:  # a longer run: the host hears of the tests before it
            if exited(min(first, _FRAMES.IDLE_S)):
                return False, False
            _FRAMES.flush()
        if exited(first):
            return False, False
        while True:
            now = time.monotonic() - t0
            if now >= guard:
                return True, False
            used = counter.read() - cpu_base - (_cpu() - self_base) if counter.path else 0.0
            if cpu_limit and used > float(cpu_limit):
                return False, True
            if exited(min(0.02, guard - now)):
                return False, False
    finally:
        os.close(pidfd)


def _digest(data):
    """A cryptographic digest: a repeat whose output matches the first one's is not sent again."""
    try:
        from _blake2 import blake2b  # no OpenSSL to load (hashlib's import costs ~4 ms)
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    return blake2b(data, digest_size=32).digest()


def _run_once(job, index, repeat, counter, first_digest):
    scratch = job.get("output_dir") or "/tmp"
    fd_in = os.open(job["tests"][index] or os.devnull, os.O_RDONLY)
    fd_out = os.open(scratch, O_TMPFILE | os.O_RDWR, 0o600)
    fd_err = os.open(scratch, O_TMPFILE | os.O_RDWR, 0o600)
    try:
        oom_before = _read_counter(job.get("oom_file"), "oom_kill")
        log = None
        clock = job.get("clock")
        if clock:
            import socket
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            log = _LogReader(ours, int(clock["max_log_bytes"]))
        start = {}

        def at_start():  # the clocks' zero: nothing of the program has run yet, nothing else will
            start.update(cg0=counter.read(), self0=_cpu(), child0=_cpu(resource.RUSAGE_CHILDREN), t0=time.monotonic())
        try:
            pid, spawn_error = _spawn(job, fd_in, fd_out, fd_err, theirs.fileno() if clock else None, at_start)
        finally:
            if clock:
                theirs.close()  # only the program holds the writing end: EOF once it is gone
        if not start:
            at_start()
        cg0, self0, child0, t0 = start["cg0"], start["self0"], start["child0"], start["t0"]
        if pid is None:
            head = {"test": index, "repeat": repeat, "spawn_error": spawn_error, "timed_out": False,
                    "cpu_exceeded": False, "exit_code": None, "signal": None, "cpu_s": 0.0, "wall_s": 0.0,
                    "max_rss_kb": 0, "oom_kills": 0, "out_size": 0, "same_as_first": False, "clean": True}
            return head, None, b"", b""
        _aim_oom_killer(pid)
        timed_out, cpu_exceeded = _wait(job, pid, counter, cg0 if cg0 is not None else 0.0, self0, log)
        if timed_out or cpu_exceeded:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        _, status, ru = os.wait4(pid, WALL)
        wall = time.monotonic() - t0
        # Under a deterministic clock a process that outlives the program would go uncounted. As
        # PID 1: any other process of the namespace still alive (zombies included).
        outlived = bool(clock) and os.getpid() == 1 and any(n.isdigit() and n != "1" for n in os.listdir("/proc"))
        _kill_everything_else()
        log_text = log.finish() if log else ""
        if cg0 is not None:
            # everything in the cgroup, minus what this runner itself used meanwhile
            cpu = max(0.0, (counter.read() - cg0) - (_cpu() - self0))
            source = "cgroup"
        else:  # every process was reaped by us or by a reaped ancestor (dodgeable: SIGCHLD=SIG_IGN)
            cpu = _cpu(resource.RUSAGE_CHILDREN) - child0
            source = "rusage"
        clean = all(_empty_dir(d) for d in job.get("clean_dirs", ()))
        out_size = os.fstat(fd_out).st_size  # the first max_output_bytes of the unnamed output file
        out = os.pread(fd_out, min(out_size, int(job["max_output_bytes"])), 0) if out_size else b""
        digest = _digest(out) if int(job.get("repeats", 1)) > 1 else None
        err = os.pread(fd_err, int(job.get("max_stderr_bytes", 65536)), 0)
    finally:
        for fd in (fd_in, fd_out, fd_err):
            os.close(fd)
        if log:
            log.sock.close()
    same = first_digest is not None and digest == first_digest
    head = {
        "test": index,
        "repeat": repeat,
        "spawn_error": None,
        "timed_out": timed_out,
        "cpu_exceeded": cpu_exceeded,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": cpu,
        "cpu_source": source,
        "wall_s": wall,
        "max_rss_kb": ru.ru_maxrss,
        "oom_kills": _read_counter(job.get("oom_file"), "oom_kill") - oom_before,
        "out_size": out_size,
        "same_as_first": same,
        "clean": clean,
    }
    if clock:
        # valgrind's own lines only ("**pid**" lines are the program's VALGRIND_PRINTF)
        head["clock_log"] = "\n".join(ln for ln in log_text.splitlines() if ln.startswith("=="))[-65536:]
        head["clock_pid"] = pid
        head["clock_problem"] = ("valgrind's log exceeded %d bytes" % clock["max_log_bytes"] if log.overflow else
                                 "a process outlived the program (its instructions would go uncounted)"
                                 if outlived else None)
    # The first repeat's output, and any repeat's that differs from it, go to the host to be judged.
    return head, digest, (b"" if same else out), err


def _header(head):
    """A frame's header as one JSON line; its values are str, int, float, bool or None (the json
    module, with re and enum behind it, costs ~10 ms of every job's start-up)."""
    def value(v):
        if v is None or v is True or v is False:
            return {None: "null", True: "true", False: "false"}[v]
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else "null"
        return str(int(v))
    return ("{" + ",".join(_quote(k) + ":" + value(v) for k, v in head.items()) + "}\n").encode()


class _Frames:
    """Frames on their way to the host, written in batches: one write (one wake-up of the host)
    per ~10 ms of short tests instead of one per test (~90 us of a ~1.5 ms trivial test). Nothing
    waits long: what is pending goes out once a program has run 2 ms (``_wait``), so the host has
    heard of every finished test before its guard could blame one; and at 1 MB."""

    HOLD_S = 0.01
    IDLE_S = 0.002
    MAX_BYTES = 1 << 20

    def __init__(self, stream):
        self.stream, self.parts, self.size, self.since = stream, [], 0, time.monotonic()

    def add(self, data):
        self.parts.append(data)
        self.size += len(data)
        if self.size >= self.MAX_BYTES or time.monotonic() - self.since >= self.HOLD_S:
            self.flush()

    def flush(self):
        if self.parts:
            self.stream.write(b"".join(self.parts))
            self.stream.flush()
            self.parts, self.size = [], 0
        self.since = time.monotonic()


_FRAMES = None  # main()'s _Frames


def main():
    # Nobody may ptrace us, read our memory or environment, or take our file descriptors.
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in _RESET_SIGNALS:
        # SIGPIPE: the host closing our stdout ends us; the rest must not stop or kill us
        # (as PID 1 the kernel already drops them; elsewhere this still matters).
        signal.signal(sig, signal.SIG_DFL if sig == signal.SIGPIPE else signal.SIG_IGN)
    src = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    with (open(src, "rb") if src else sys.stdin.buffer) as f:
        job = marshal.loads(f.read())
    os.chdir(job.get("cwd") or "/")
    counter = CpuCounter(job.get("cpu_file"), job.get("cpu_format", "ns"))
    global _FRAMES
    _FRAMES = _Frames(sys.stdout.buffer)
    failed = False
    for index in range(len(job["tests"])):
        first_digest = None
        for repeat in range(int(job.get("repeats", 1))):
            head, digest, out, err = _run_once(job, index, repeat, counter, first_digest)
            if repeat == 0:
                first_digest = digest
            head["out_len"], head["err_len"] = len(out), len(err)
            _FRAMES.add(b"".join((_header(head), out, err)))
            failed = (head["spawn_error"] is not None or head["timed_out"] or head["cpu_exceeded"]
                      or head["signal"] is not None or head["exit_code"] != 0 or not head["clean"])
            if failed:
                break  # no point timing a failing test again
        if head.get("spawn_error") or (failed and job.get("stop_on_failure")):
            break
    _FRAMES.add(b'{"done": true}\n')
    _FRAMES.flush()


if __name__ == "__main__":
    main()
