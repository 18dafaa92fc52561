"""In-sandbox runner: forks each test under rlimits and reports the program's own rusage.

Runs *inside* the isolation boundary (bwrap / a docker container / a plain process for
local-unsafe) with the system interpreter in isolated mode, so it uses the standard library
only. One runner per submission amortizes the sandbox start-up over all tests and repeats.

Protocol: a JSON job spec on stdin (or in the file named by argv[1]); on stdout one frame per
execution: a JSON header line, then ``out_len`` bytes of the program's stdout, then
``err_len`` bytes of its stderr. The host does all judging; expected outputs never enter the
sandbox, so the program cannot read them.
"""
import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option, value):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:  # pragma: no cover - prctl is always there on Linux
        pass


def _read_oom_kills(path):
    """oom_kill counter of the sandbox's memory cgroup (v1 memory.oom_control / v2 memory.events)."""
    if not path:
        return 0
    try:
        with open(path) as f:
            for line in f:
                key, _, val = line.partition(" ")
                if key == "oom_kill":
                    return int(val)
    except OSError:
        pass
    return 0


def _descendants(root):
    """Pids whose parent chain reaches ``root`` (orphans reparent to us: we are a subreaper)."""
    parent = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may contain spaces and parentheses: fields resume after the last ')'
        fields = stat[stat.rfind(b")") + 2:].split()
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


def _has_children():
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return True
    except ChildProcessError:
        return False


def _kill_leftovers(me):
    """SIGKILL every process left under the runner (e.g. a setsid grandchild), then reap."""
    # Fast path: orphans reparent to us (subreaper), so no children means no descendants.
    if not _has_children():
        return
    for _ in range(50):
        pids = _descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_all()
        time.sleep(0.001)
    _reap_all()


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


_RLIMITS = (
    ("as_bytes", resource.RLIMIT_AS),
    ("fsize_bytes", resource.RLIMIT_FSIZE),
    ("nproc", resource.RLIMIT_NPROC),
    ("stack_bytes", resource.RLIMIT_STACK),
    ("nofile", resource.RLIMIT_NOFILE),
)
_CHILD_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGINT, signal.SIGTERM)


def _soft_limits(lim):
    """Lower our own *soft* limits so a posix_spawn child inherits them; returns what to restore.

    Used when cgroups (memory, pids), the wall timer and the capped tmpfs do the hard
    enforcement: a program that raises its soft limits back gains nothing. posix_spawn is a
    vfork+exec (~1 ms) where a fork of this interpreter costs several ms per test.
    """
    saved = []
    wanted = [(key, res) for key, res in _RLIMITS] + [("cpu_s", resource.RLIMIT_CPU), ("core", resource.RLIMIT_CORE)]
    for key, res in wanted:
        val = 0 if key == "core" else lim.get(key)
        if val is None:
            continue
        soft, hard = resource.getrlimit(res)
        val = int(val) if hard == resource.RLIM_INFINITY else min(int(val), hard)
        resource.setrlimit(res, (val, hard))
        saved.append((res, soft, hard))
    return saved


def _spawn_child(job, stdin_path, out_path, err_path):
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, stdin_path or os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, out_path, flags, 0o600),
        (os.POSIX_SPAWN_OPEN, 2, err_path, flags, 0o600),
    ]
    saved = _soft_limits(job["limits"])
    try:
        return os.posix_spawn(job["argv"][0], job["argv"], job.get("env") or {}, file_actions=actions,
                              setsid=True, setsigdef=_CHILD_DEFAULT_SIGNALS)
    finally:
        for res, soft, hard in reversed(saved):
            resource.setrlimit(res, (soft, hard))


def _set_limits(lim):
    def setl(res, val):
        if val is None:
            return
        val = int(val)
        try:
            resource.setrlimit(res, (val, val))
        except (ValueError, OSError):
            # keep the hard limit we may not raise; lower soft limit still applies
            soft, hard = resource.getrlimit(res)
            if hard != resource.RLIM_INFINITY:
                resource.setrlimit(res, (min(val, hard), hard))

    cpu = lim.get("cpu_s")
    if cpu is not None:
        # soft: SIGXCPU at the limit, hard: SIGKILL one second later
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    setl(resource.RLIMIT_AS, lim.get("as_bytes"))
    setl(resource.RLIMIT_FSIZE, lim.get("fsize_bytes"))
    setl(resource.RLIMIT_NPROC, lim.get("nproc"))
    setl(resource.RLIMIT_STACK, lim.get("stack_bytes"))
    setl(resource.RLIMIT_NOFILE, lim.get("nofile"))
    setl(resource.RLIMIT_CORE, 0)


def _exec_child(job, stdin_path, out_path, err_path):
    """In the forked child: new session, rlimits, redirected stdio, exec. Never returns."""
    try:
        os.setsid()
        fd_in = os.open(stdin_path or os.devnull, os.O_RDONLY)
        fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        fd_err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        # Every other fd of ours is non-inheritable (PEP 446): exec closes them.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        _set_limits(job["limits"])
        os.execve(job["argv"][0], job["argv"], job.get("env") or {})
    except BaseException as exc:  # exec failed: report through stderr and a reserved code
        try:
            os.write(2, ("runner: exec failed: %r\n" % (exc,)).encode())
        finally:
            os._exit(127)


def _run_once(job, index, repeat, stdin_path):
    # One pair of files reused (O_TRUNC) for every execution: no create/unlink per test.
    out_path = os.path.join(job["scratch"], "stdout")
    err_path = os.path.join(job["scratch"], "stderr")
    oom_before = job["_oom_seen"]
    wall_limit = float(job["limits"]["wall_s"])
    t0 = time.monotonic()
    if job.get("hard_limits", True):
        pid = os.fork()
        if pid == 0:
            _exec_child(job, stdin_path, out_path, err_path)
    else:
        try:
            pid = _spawn_child(job, stdin_path, out_path, err_path)
        except OSError as exc:
            return ({"test": index, "repeat": repeat, "timed_out": False, "exit_code": 127, "signal": None,
                     "cpu_s": 0.0, "wall_s": 0.0, "max_rss_kb": 0, "oom_kills": 0, "out_size": 0},
                    b"", ("runner: exec failed: %r\n" % (exc,)).encode())
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    timed_out = not poller.poll(wall_limit * 1000.0)
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            os.kill(pid, signal.SIGKILL)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(pidfd)
    _kill_leftovers(os.getpid())
    head = {
        "test": index,
        "repeat": repeat,
        "timed_out": timed_out,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "wall_s": wall,
        "max_rss_kb": ru.ru_maxrss,
    }
    job["_oom_seen"] = _read_oom_kills(job.get("oom_file"))
    head["oom_kills"] = job["_oom_seen"] - oom_before
    send_out = repeat == 0 and job.get("keep_output", True)
    out = _read_cap(out_path, job["max_output_bytes"]) if send_out else b""
    err = _read_cap(err_path, job.get("max_stderr_bytes", 65536))
    head["out_size"] = _size(out_path)
    return head, out, err


def _read_cap(path, cap):
    try:
        with open(path, "rb") as f:
            return f.read(cap)
    except OSError:
        return b""


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _emit(stream, head, out, err):
    head["out_len"] = len(out)
    head["err_len"] = len(err)
    stream.write(json.dumps(head).encode() + b"\n")
    stream.write(out)
    stream.write(err)
    stream.flush()


def main():
    # The program runs as our uid: forbid it to ptrace us or read our memory.
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Our soft limits are lowered around each spawn: do not die of them ourselves.
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    src = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    job = json.load(open(src) if src else sys.stdin)
    os.makedirs(job["scratch"], exist_ok=True)
    os.chdir(job.get("cwd") or "/")
    job["_oom_seen"] = _read_oom_kills(job.get("oom_file"))
    stream = sys.stdout.buffer
    for index, stdin_path in enumerate(job["tests"]):
        for repeat in range(int(job.get("repeats", 1))):
            head, out, err = _run_once(job, index, repeat, stdin_path)
            _emit(stream, head, out, err)
            failed = head["timed_out"] or head["signal"] is not None or head["exit_code"] != 0
            if failed:
                break  # no point timing a failing test again
        if failed and job.get("stop_on_failure"):
            break
    stream.write(b'{"done": true}\n')
    stream.flush()


if __name__ == "__main__":
    main()
