"""Commands that do no training start without torch (about 3.5 s of a 5 s start-up): `perfalign
--help`, a command's help and `perfalign config` read the stage configs' dataclasses, whose modules
import torch only where tensors are made."""
from __future__ import annotations

import json
import os
import subprocess
import sys

# The CLI's entry point run in one process for each command line (each ends in SystemExit), then
# what they imported.
PROBE = """
import json, sys
from perfalign.cli.main import main
codes = []
for argv in json.loads(sys.argv[1]):
    sys.argv = ["perfalign", *argv]
    try:
        main()
        codes.append(0)
    except SystemExit as e:
        codes.append(e.code or 0)
print(json.dumps({"codes": codes, "heavy": sorted(m for m in ("torch", "transformers", "trl") if m in sys.modules)}))
"""


def test_commands_that_train_nothing_do_not_import_torch(tmp_path):
    commands = [["--help"], ["align", "--help"], ["config"], ["config", "--profile", "small"]]
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(commands)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300,
                       env={**os.environ, "COLUMNS": "200", "PERFALIGN_HOME": str(tmp_path / "home")})
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["codes"] == [0] * len(commands), p.stdout[-2000:] + p.stderr[-2000:]
    assert p.stdout.count("Usage") == 2 and p.stdout.count("sft.learning_rate") == 2, p.stdout[-2000:]
    assert out["heavy"] == [], p.stderr[-2000:]
