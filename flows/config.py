"""One configuration file (flows/perfalign.toml): production defaults, named profiles that
override them, and `--set table.key=value` overrides from the command line."""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

DEFAULT_CONFIG = Path(__file__).resolve().parent / "perfalign.toml"
REPO_ROOT = Path(__file__).resolve().parents[1]
# Keys holding paths: resolved against the config's base directory when relative.
_PATH_KEYS = {("perf", "source"), ("synth", "seeds")}


class ConfigError(ValueError):
    pass


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _parse_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw  # a bare string


def load_config(path: Path | None = None, profile: str | None = None, overrides: list[str] = ()) -> dict:
    path = Path(path) if path else DEFAULT_CONFIG
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path}: {e}") from None
    profiles = raw.pop("profiles", {})
    cfg = raw
    if profile and profile != "production":
        if profile not in profiles:
            raise ConfigError(f"profile {profile!r} not in {path} (have: production, {', '.join(profiles) or 'none'})")
        unknown = set(profiles[profile]) - set(cfg)
        if unknown:
            raise ConfigError(f"profile {profile!r} overrides unknown tables: {sorted(unknown)}")
        cfg = _merge(cfg, profiles[profile])
    for item in overrides:
        key, sep, value = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2:
            raise ConfigError(f"--set {item!r}: expected table.key=value")
        table, name = parts
        if table not in cfg or name not in cfg[table]:
            raise ConfigError(f"--set {item!r}: unknown setting {key!r}")
        cfg[table][name] = _parse_value(value.strip())
    base = REPO_ROOT if path.resolve() == DEFAULT_CONFIG else path.resolve().parent
    for table, name in _PATH_KEYS:
        v = cfg.get(table, {}).get(name)
        if isinstance(v, str) and v and not v.startswith("hf:") and not Path(v).is_absolute():
            cfg[table][name] = str(base / v)
    cfg["_meta"] = {"config": str(path), "profile": profile or "production"}
    return cfg


def section_hash(cfg: dict, *tables: str) -> str:
    import hashlib

    return hashlib.sha256(json.dumps({t: cfg.get(t) for t in tables}, sort_keys=True).encode()).hexdigest()[:16]
