"""The runner alone (no backend), the one file shipped into the sandbox: a program it cannot start
is reported in its frame as the runner's spawn error (the host's "could not start the program"),
never as a runner crash."""
import json
import marshal
import subprocess
import sys

import pytest

from perfalign.sandbox.backends.base import RUNNER_PACKAGE
from perfalign.sandbox.shipping import bundle


@pytest.mark.parametrize("hard_limits", [True, False], ids=["fork", "posix_spawn"])
def test_a_program_that_cannot_start_is_a_spawn_error_frame(tmp_path, hard_limits):
    job = {"argv": [str(tmp_path / "missing-program")], "tests": [None], "repeats": 3,
           "limits": {"wall_s": 5, "cpu_s": 5}, "hard_limits": hard_limits, "output_dir": str(tmp_path)}
    spec = tmp_path / "job.marshal"
    spec.write_bytes(marshal.dumps(job))
    runner = tmp_path / "runner.py"
    runner.write_text(bundle(RUNNER_PACKAGE))
    proc = subprocess.run([sys.executable, "-I", "-S", str(runner), str(spec)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    frames = [json.loads(line) for line in proc.stdout.splitlines()]
    assert frames[-1] == {"done": True}
    (head,) = frames[:-1]  # one frame: a test that cannot start is not repeated
    assert head["spawn_error"].startswith("exec failed") and "No such file" in head["spawn_error"]
    assert head["exit_code"] is None and head["signal"] is None
    assert head["out_len"] == head["err_len"] == 0
