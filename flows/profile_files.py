"""Where the configuration's profiles are (flows/profiles/<name>.toml, package data) and which
one every command uses without --profile. Light: the CLI reads it at start."""
from __future__ import annotations

from pathlib import Path

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
DEFAULT_PROFILE = "embedded"  # every command's profile without --profile


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))
