"""In-sandbox runner: starts each execution of the program, measures it, reports it.

Runs *inside* the isolation boundary with the system interpreter in isolated mode (stdlib
only). One runner per submission amortizes the sandbox start-up over all tests and repeats.
This package is shipped into every sandbox as one file (``sandbox/shipping.py``) and runs
``main.main()``: ``main`` reads the job and writes the frames (``report``); ``execution`` runs
one execution of the program, started by ``spawn``, measured with ``counters``, cleaned up by
``reaping``; ``system`` holds what they share of the OS.

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
