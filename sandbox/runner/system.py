"""What the runner's parts share of the system: the signal module, prctl, wait flags, the signals
reset in the program."""
import ctypes
import os

# Every job starts a fresh interpreter: the modules a job may not need are imported where they
# are used (json, hashlib, socket and shutil cost ~20 ms of a job's ~85 ms start-up here), and
# signals come from the C module: ``signal`` wraps it in enums (enum's import: ~4 ms a job).
try:
    import _signal as signal
except ImportError:  # pragma: no cover - CPython always has it
    import signal

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
