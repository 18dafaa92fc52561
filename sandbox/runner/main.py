"""The runner's entry: reads the job spec, runs every test and repeat, writes the frames."""
import marshal
import os
import sys

from .counters import CpuCounter
from .execution import _run_once
from .report import _Frames, _header
from .system import _RESET_SIGNALS, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, _prctl, signal


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
    frames = _Frames(sys.stdout.buffer)
    failed = False
    for index in range(len(job["tests"])):
        first_digest = None
        for repeat in range(int(job.get("repeats", 1))):
            head, digest, out, err = _run_once(job, index, repeat, counter, first_digest, frames)
            if repeat == 0:
                first_digest = digest
            head["out_len"], head["err_len"] = len(out), len(err)
            frames.add(b"".join((_header(head), out, err)))
            failed = (head["spawn_error"] is not None or head["timed_out"] or head["cpu_exceeded"]
                      or head["signal"] is not None or head["exit_code"] != 0 or not head["clean"])
            if failed:
                break  # no point timing a failing test again
        if head.get("spawn_error") or (failed and job.get("stop_on_failure")):
            break
    frames.add(b'{"done": true}\n')
    frames.flush()
