"""The one cache root: compiled programs, the sandbox's calibration and seccomp filter, the
embedded tiny model, kernel baselines and the LLM answers of perfdata.synth live under it."""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


def cache_root() -> Path:
    """PERFALIGN_CACHE_DIR, else /var/cache/perfalign for root, else $XDG_CACHE_HOME/perfalign
    (default ~/.cache/perfalign).

    Compiled programs are mounted into sandboxes that run as an unprivileged uid, so when we
    are root every directory on the path must be world-traversable (/root is not).
    """
    env = os.environ.get("PERFALIGN_CACHE_DIR")
    if env:
        root = Path(env)
    elif os.geteuid() == 0:
        root = Path("/var/cache/perfalign")
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfalign"
    root = root.resolve()
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
    if os.geteuid() == 0:
        for d in (root, *root.parents):
            if not os.stat(d).st_mode & 0o001:
                raise PermissionError(
                    f"cache directory {root}: {d} is not world-traversable, so the sandbox's "
                    f"unprivileged uid cannot reach compiled programs; set PERFALIGN_CACHE_DIR elsewhere")
    return root


# The package's folder: the checkout's root, or site-packages/perfalign of an installed wheel,
# which carries data/ (the bundled seeds, synthetic pairs, CodeContests, ParEval and PolyBench
# samples) and the config profiles (config/profiles/*.toml) as package data (pyproject.toml; tests/test_wheel.py).
SOURCE_ROOT = Path(str(resources.files("perfalign"))).resolve()
BUNDLED_DATA = SOURCE_ROOT / "data"


def bundled(name: str, setting: str) -> Path:
    """``data/<name>`` of the package, or a clear error naming the ``setting`` to pass instead."""
    path = BUNDLED_DATA / name
    if not path.exists():
        raise FileNotFoundError(f"the bundled sample {path} is missing (perfalign installed without its "
                                f"package data): pass {setting}")
    return path
