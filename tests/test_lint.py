"""ruff (pinned in the dev extra, configured in pyproject.toml) runs in CI through the test suite."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: pip install -e '.[dev]'"
    p = subprocess.run([ruff, "check", "--output-format", "concise", str(ROOT)], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
