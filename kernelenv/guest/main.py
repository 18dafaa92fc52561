"""The guest's entry: a model server (``--child``), or the driver reading its job from stdin."""
from __future__ import annotations

import json
import os
import sys

from .calibrate import _calibrate
from .driver import _Driver
from .server import _child
from .shared import _prctl_nondumpable


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child()
        return
    job = json.loads(sys.stdin.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the job (seed, nonce) is read: nothing else may read it
    _prctl_nondumpable()  # before any candidate code exists anywhere in this sandbox
    out = sys.stdout
    if job.get("mode") == "calibrate":
        result = _calibrate(job)
    else:
        try:
            result = _Driver(job).run()
        except Exception as e:  # noqa: BLE001 - the problem itself failed (not the candidate)
            result = {"nonce": job["nonce"], "role": job.get("role"), "status": "baseline_error",
                      "message": f"{type(e).__name__}: {e}"[:4000]}
    out.write("\nPERFALIGN-REPORT " + json.dumps(result) + "\n")
    out.flush()
