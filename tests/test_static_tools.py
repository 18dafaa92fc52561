"""Path-based tools (pyright, mypy, import-graph viewers) resolve ``perfalign.*`` in a checkout set
up by scripts/setup.sh: a ``sys.path`` entry holds a ``perfalign`` folder that is this checkout, so
no import hook is needed (docs/development.md)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a static tool does: look for perfalign/ on the interpreter's sys.path, without the import hooks.
FIND = ("import importlib.machinery as m, json; s = m.PathFinder.find_spec('perfalign'); "
        "print(json.dumps(list(s.submodule_search_locations) if s else None))")


def test_perfalign_resolves_by_path(tmp_path):
    p = subprocess.run([sys.executable, "-c", FIND], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    found = json.loads(p.stdout.strip() or "null")
    assert found and Path(found[0]).resolve() == ROOT, (
        f"no perfalign/ on sys.path ({found}): rerun `bash scripts/setup.sh` (it links .venv/perfalign-path)")
    assert (ROOT / "py.typed").is_file()  # mypy skips an installed package without it (PEP 561)
