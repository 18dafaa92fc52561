"""The one configuration: flows/perfalign.toml (the production defaults and named profiles),
`--set table.key=value` overrides and the CLI's flags, built once into a typed
``PerfalignConfig`` that the CLI passes down as objects.

Each table is a frozen dataclass; its fields have no defaults of their own, so the TOML file is
the one place where the pipeline's defaults live. The libraries' own config dataclasses
(``SynthConfig``, ``TripletConfig``, ``EvalConfig``, the alignment stage configs) are filled
from these tables by the pipeline's stages (flows/pipeline.py). Every value remembers where it
came from (``file``, ``profile <name>``, ``--set``, ``--<flag>``): `perfalign config` shows it.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfalign.common.paths import SOURCE_ROOT

DEFAULT_CONFIG = Path(__file__).resolve().parent / "perfalign.toml"
DEFAULT_PROFILE = "embedded"  # what `perfalign pipeline` and `perfalign config` use without --profile


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class SandboxSettings:
    backend: str            # auto | bwrap | docker | local-unsafe
    workers: int            # 0: one per core

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1


@dataclass(frozen=True)
class PerfSettings:
    source: str             # "hf:DATASET" or a folder of CodeContests Parquet files
    repeats: int
    time_limit_factor: float
    max_tests: int          # 0: all
    limit_problems: int     # 0: all
    batch_size: int


@dataclass(frozen=True)
class SynthSettings:
    backend: str
    model: str              # "": the backend's default
    n: int
    seeds: str
    min_speedup: float
    concurrency: int
    requests_per_minute: float


@dataclass(frozen=True)
class TripletSettings:
    seed: int
    max_margin: float
    held_out_count: int
    min_group_solutions: int
    small_groups: str
    controlled_task: bool


@dataclass(frozen=True)
class AlignSettings:
    base_model: str         # a Hub id, a path, or "embedded" (the tiny local model)
    profile: str            # production | embedded (alignment.profiles)
    stages: tuple[str, ...]


@dataclass(frozen=True)
class EvalSettings:
    profile: str
    n_samples: int
    temperature: float
    top_p: float
    tasks: tuple[str, ...]
    threads: int


@dataclass(frozen=True)
class PublishSettings:
    repo_id: str            # "": do not publish
    private: bool


TABLES: dict[str, type] = {"sandbox": SandboxSettings, "perf": PerfSettings, "synth": SynthSettings,
                           "triplets": TripletSettings, "align": AlignSettings, "eval": EvalSettings,
                           "publish": PublishSettings}
# Keys holding paths: resolved against the config's base directory when relative.
_PATH_KEYS = {("perf", "source"), ("synth", "seeds")}


@dataclass(frozen=True)
class PerfalignConfig:
    sandbox: SandboxSettings
    perf: PerfSettings
    synth: SynthSettings
    triplets: TripletSettings
    align: AlignSettings
    eval: EvalSettings
    publish: PublishSettings
    config_file: str = str(DEFAULT_CONFIG)
    profile: str = "production"
    origins: dict[str, str] = field(default_factory=dict, compare=False)  # "table.key" -> where it was set

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (what the run state records and Prefect shows as a parameter)."""
        out = {t: dataclasses.asdict(getattr(self, t)) for t in TABLES}
        out["_meta"] = {"config": self.config_file, "profile": self.profile}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PerfalignConfig":
        """The inverse of ``to_dict`` (a flow parameter comes back as a dict)."""
        meta = data.get("_meta", {})
        return cls(**{t: _typed(t, TABLES[t], data[t], {}) for t in TABLES},
                   config_file=meta.get("config", str(DEFAULT_CONFIG)), profile=meta.get("profile", "production"))

    def section_hash(self, *tables: str) -> str:
        """A stable hash of some tables: part of a stage's skip key."""
        blob = json.dumps({t: dataclasses.asdict(getattr(self, t)) for t in tables}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def explain(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every effective value with its origin (`perfalign config`)."""
        return {t: {k: {"value": v, "from": self.origins.get(f"{t}.{k}", "file")}
                    for k, v in dataclasses.asdict(getattr(self, t)).items()} for t in TABLES}


def _merge(base: dict, over: dict, origin: str, origins: dict[str, str]) -> dict:
    out = copy.deepcopy(base)
    for table, values in over.items():
        for k, v in values.items():
            out.setdefault(table, {})[k] = v
            origins[f"{table}.{k}"] = origin
    return out


def _parse_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw  # a bare string


def _coerce(where: str, hint: Any, value: Any, origin: str) -> Any:
    bad = ConfigError(f"{where} = {value!r} (from {origin}): expected {getattr(hint, '__name__', hint)}")
    if hint is bool:
        if not isinstance(value, bool):
            raise bad
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise bad
        return value
    if typing.get_origin(hint) is tuple:
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} = {value!r} (from {origin}): expected a list of strings")
        return tuple(value)
    raise ConfigError(f"{where}: unsupported type {hint}")


def _typed(table: str, cls: type, values: dict[str, Any], origins: dict[str, str]) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = set(values) - set(names)
    if unknown:
        k = sorted(unknown)[0]
        raise ConfigError(f"unknown setting {table}.{k} (from {origins.get(f'{table}.{k}', 'file')}); "
                          f"[{table}] has: {', '.join(names)}")
    missing = [n for n in names if n not in values]
    if missing:
        raise ConfigError(f"[{table}] misses {', '.join(missing)} (the config file holds every default)")
    return cls(**{n: _coerce(f"{table}.{n}", hints[n], values[n], origins.get(f"{table}.{n}", "file"))
                  for n in names})


def _resolve_paths(cfg: dict, base: Path, only: set | None = None) -> None:
    for table, name in _PATH_KEYS & (only or _PATH_KEYS):
        v = cfg.get(table, {}).get(name)
        if isinstance(v, str) and v and not v.startswith("hf:") and not Path(v).is_absolute():
            cfg[table][name] = str(base / v)


def load_config(path: Path | str | None = None, profile: str | None = None, overrides: list[str] = (),
                flags: dict[str, Any] | None = None) -> PerfalignConfig:
    """TOML defaults, then the profile, then ``--set`` overrides, then the CLI's flags
    (``{"perf.source": ...}``; None values are ignored), typed and checked."""
    path = Path(path) if path else DEFAULT_CONFIG
    profile = profile or "production"
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path}: {e}") from None
    profiles = raw.pop("profiles", {})
    unknown = set(raw) - set(TABLES)
    if unknown:
        raise ConfigError(f"{path}: unknown tables {sorted(unknown)}; known: {', '.join(TABLES)}")
    origins: dict[str, str] = {}
    cfg = raw
    if profile != "production":
        if profile not in profiles:
            raise ConfigError(f"profile {profile!r} not in {path} (have: production, {', '.join(profiles) or 'none'})")
        bad = set(profiles[profile]) - set(TABLES)
        if bad:
            raise ConfigError(f"profile {profile!r} overrides unknown tables: {sorted(bad)}")
        cfg = _merge(cfg, profiles[profile], f"profile {profile}", origins)
    sets: dict[str, dict[str, Any]] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2:
            raise ConfigError(f"--set {item!r}: expected table.key=value")
        table, name = parts
        if table not in TABLES or name not in {f.name for f in dataclasses.fields(TABLES[table])}:
            raise ConfigError(f"--set {item!r}: unknown setting {key.strip()!r}")
        sets.setdefault(table, {})[name] = _parse_value(value.strip())
    cfg = _merge(cfg, sets, "--set", origins)
    _resolve_paths(cfg, SOURCE_ROOT if path.resolve() == DEFAULT_CONFIG else path.resolve().parent)
    for key, value in (flags or {}).items():
        if value is not None:
            table, name = key.split(".")
            cfg = _merge(cfg, {table: {name: value}}, f"--{name.replace('_', '-')}", origins)
            _resolve_paths(cfg, Path.cwd(), only={(table, name)})  # a flag's path is the shell's
    typed = {t: _typed(t, cls, cfg.get(t, {}), origins) for t, cls in TABLES.items()}
    return PerfalignConfig(**typed, config_file=str(path), profile=profile, origins=origins)
