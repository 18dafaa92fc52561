"""The one configuration: one table per stage, each the stage library's own config dataclass
(which holds its defaults and field docs), a profile file (config/profiles/<name>.toml) holding
only the values that differ from those defaults, `--set table.key=value` overrides and the
CLI's flags, built once into a typed ``PerfalignConfig`` that the CLI passes down as objects.

Field names are the libraries' own at every boundary. Fields a run fills in (paths of the run
directory, models, secrets, the run's [sandbox] object) are not settings; a few are linked to
another table's setting (``LINKS``). Values are checked where they enter (types,
unknown keys, ranges and choices through each dataclass's own checks) and remember where they
came from (``default``, ``profile <name>``, ``--set``, ``--<flag>``): `perfalign config` shows them.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import types
import typing
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable

import tomllib

from perfalign.alignment.dpa import DPAStageConfig
from perfalign.alignment.models import PRODUCTION_BASE_MODEL
from perfalign.alignment.reward_model import RewardStageConfig
from perfalign.alignment.rlpf import RLPFStageConfig
from perfalign.alignment.sft import SFTStageConfig
from perfalign.alignment.stages import STAGES as ALIGN_STAGES
from perfalign.evaluation.config import EvalConfig
from perfalign.grpo.train import GrpoRunConfig
from perfalign.kernelenv.score import ScoreConfig
from perfalign.perfdata.controlled import check_pairs
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.synth.config import SynthConfig
from perfalign.perfdata.triplets import TripletConfig
from perfalign.sandbox.settings import SandboxSettings

from .fields import DEFAULT_PROFILE, PROFILES_DIR, option_name, profile_names, static_setting


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class PerfSettings(BuildSettings):
    """CodeContests-Perf (paper §IV-A): the measurement settings and what to measure."""

    source: str = "hf:deepmind/code_contests"  # hf:DATASET[:split], or a folder of CodeContests Parquet/JSONL
    limit_problems: int | None = None          # only the first N problems; None: every problem
    allow_partial: bool = False                # go on without source files that cannot be read (and say so)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_tests is not None and self.max_tests < 1:
            raise ValueError("max_tests must be >= 1 (or unset: all tests)")
        if self.limit_problems is not None and self.limit_problems < 1:
            raise ValueError("limit_problems must be >= 1 (or unset: all problems)")

    def build_settings(self) -> BuildSettings:
        """The library's settings (part of every submission's key: without the pipeline's fields)."""
        return _base(BuildSettings, self)


@dataclass
class TripletSettings(TripletConfig):
    """Triplets (paper §VII-B) and whether the controlled task's rows join them."""

    controlled_task: bool = False  # also train on the controlled task (perfdata/controlled.py; eval task "controlled")
    # the tiny model needs ~300 SFT steps on the family; two pair kinds per instance keep the reward
    # model and DPA within the main job's time
    controlled_copies: int = 3     # SFT rows per correct program of a training instance
    controlled_repeats: int = 1    # runs per test when the controlled stage measures the references
    controlled_pairs: tuple[str, ...] = ("fast>medium", "fast>slow")  # reward pairs kept (fast>medium ... fast>wrong)

    def __post_init__(self) -> None:
        if self.controlled_copies < 1 or self.controlled_repeats < 1:
            raise ValueError("controlled_copies and controlled_repeats must be >= 1")
        check_pairs(self.controlled_pairs)

    def triplet_config(self) -> TripletConfig:
        return _base(TripletConfig, self)


@dataclass(frozen=True)
class AlignSettings:
    """Which alignment stages run, from which base model (the stages' own tables hold the rest)."""

    base_model: str = PRODUCTION_BASE_MODEL  # a Hub id, a path, or "embedded" (the tiny local model)
    stages: tuple[str, ...] = tuple(ALIGN_STAGES)  # which of sft, reward, rlpf, dpa run
    # (a CPU box, one torch thread per stage: 2; one GPU holds one stage: 1)
    parallel_stages: int = 1  # stages trained at once as the DAG allows, a process each (SFT beside the RM)

    def __post_init__(self) -> None:
        if self.parallel_stages < 1:
            raise ValueError(f"parallel_stages must be >= 1, not {self.parallel_stages}")
        unknown = set(self.stages) - set(ALIGN_STAGES)
        if unknown or not self.stages:
            raise ValueError(f"unknown or no stages {sorted(unknown) or list(self.stages)}; choose from "
                             f"{', '.join(ALIGN_STAGES)}")


@dataclass(frozen=True)
class PublishSettings:
    repo_id: str = ""        # "": do not publish
    private: bool = False    # a private Hub repository


def _base(cls: type, obj: Any) -> Any:
    return cls(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(cls)})


# Filled in by the run, not settings: where a stage reads and writes, which models, secrets.
_RUN_FIELDS = {"model_name_or_path", "data_path", "output_dir", "reward_model_path", "value_model_path",
               "codecontests_dir", "overwrite", "trl_overrides"}
RUNTIME: dict[str, set[str]] = {
    "synth": {"api_key", "cache_dir", "sample_dir"}, "eval": {"models", "codecontests_dir", "controlled_dir"},
    "grpo": {"out_dir", "arm", "seed", "init_model_dir", "sandbox"},
    **{s: _RUN_FIELDS for s in ALIGN_STAGES}, "rlpf": _RUN_FIELDS | {"sandbox"},
}
# Settings another table decides: "table.key" -> (source "table.key", how). (The [sandbox] table
# is no link: the pipeline hands each stage that runs programs the SandboxSettings object.)
LINKS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "synth.repeats": ("perf.repeats", lambda c: c.perf.repeats),
    "sft.model_name_or_path": ("align.base_model", lambda c: c.align.base_model),
    "reward.model_name_or_path": ("align.base_model", lambda c: c.align.base_model),
    "rlpf.clock": ("perf.clock", lambda c: c.perf.clock),  # Eq. 4 in the unit of the dataset's labels
}
# Keys holding paths: a relative one is the profile file's (relative to that file) or, given
# with --set or a flag, the shell's (relative to the current directory); never the package's.
_PATH_KEYS = {("perf", "source"), ("synth", "seeds"), ("eval", "pareval_dir"), ("eval", "polybench_dir"),
              ("eval", "kernelbench_dir"), ("grpo", "polybench_dir")}
_SCALARS = (bool, int, float, str, Path)


def _scalar(hint: Any) -> tuple[Any, bool] | None:
    """(the supported type, whether None is allowed), or None for a type a setting cannot have."""
    args = typing.get_args(hint)
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            return None
        hint = rest[0]
    tuple_of = typing.get_origin(hint) is tuple and typing.get_args(hint)[1:] == (Ellipsis,) \
        and typing.get_args(hint)[0] in (str, int)
    return (hint, optional) if hint in _SCALARS or tuple_of else None


@functools.cache
def _fields(cls: type, prefix: str = "") -> dict[str, tuple[Any, dataclasses.Field]]:
    """Every field of a dataclass, nested dataclasses flattened ("measure.peak_n")."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[Any, dataclasses.Field]] = {}
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            out.update(_fields(hints[f.name], f"{prefix}{f.name}."))
        else:
            out[prefix + f.name] = (hints[f.name], f)
    return out


@functools.cache
def settings(table: str) -> dict[str, Any]:
    """The settable fields of a table: name -> type (what a profile, --set or a flag may set);
    a nested dataclass's fields are "field.name"."""
    return {name: hint for name, (hint, _) in _fields(TABLES[table]).items()
            if name.split(".")[0] not in RUNTIME.get(table, ()) and f"{table}.{name}" not in LINKS
            and _scalar(hint) is not None}


def _make(cls: type, kv: dict[str, Any]) -> Any:
    """``cls`` from dotted values; a nested dataclass starts from its default and takes its own."""
    hints = typing.get_type_hints(cls)
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for k, v in kv.items():
        head, _, rest = k.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = v
        else:
            top[head] = v
    for f in dataclasses.fields(cls):
        if f.name in nested:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            own = {k.split(".")[0] for k in nested[f.name]}
            inner = _make(hints[f.name], nested[f.name])
            top[f.name] = dataclasses.replace(default, **{n: getattr(inner, n) for n in own})
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and f.name not in top:
            top[f.name] = ""  # a run's required field (e.g. GRPO's out_dir): the run fills it in
    return cls(**top)


@dataclass(frozen=True)
class PerfalignConfig:
    sandbox: SandboxSettings
    perf: PerfSettings
    synth: SynthConfig
    triplets: TripletSettings
    align: AlignSettings
    sft: SFTStageConfig
    reward: RewardStageConfig
    rlpf: RLPFStageConfig
    dpa: DPAStageConfig
    eval: EvalConfig
    kernel: ScoreConfig
    grpo: GrpoRunConfig
    publish: PublishSettings
    profile: str = DEFAULT_PROFILE
    config_file: str | None = None           # an extra profile file (--config), applied after the profile
    origins: dict[str, str] = dataclasses.field(default_factory=dict, compare=False)  # "table.key" -> origin

    def values(self, table: str, linked: bool = False) -> dict[str, Any]:
        """A table's settings (and, with ``linked``, its linked fields) as plain JSON-able values."""
        obj = getattr(self, table)
        names = list(settings(table))
        if linked:
            names += [k.split(".", 1)[1] for k in LINKS if k.startswith(table + ".")]
        return {n: _plain(attrgetter(n)(obj)) for n in names}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (what the run state records and Prefect shows as a parameter)."""
        out: dict[str, Any] = {t: self.values(t) for t in TABLES}
        out["_meta"] = {"profile": self.profile, "config": self.config_file}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PerfalignConfig":
        """The inverse of ``to_dict`` (a flow parameter comes back as a dict)."""
        meta = data.get("_meta", {})
        return _build({t: dict(data.get(t, {})) for t in TABLES}, {}, meta.get("profile", DEFAULT_PROFILE),
                      meta.get("config"))

    def section_hash(self, *tables: str) -> str:
        """A stable hash of some tables (linked values included): part of a stage's skip key.
        How many sandbox workers and retries does not change what is measured."""
        throughput = {("sandbox", "workers"), ("sandbox", "retries")}
        blob = json.dumps({t: {k: v for k, v in self.values(t, linked=True).items() if (t, k) not in throughput}
                           for t in tables}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def explain(self, docs: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
        """Every effective value with its origin (`perfalign config`) and, with ``docs``, its doc."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for t in TABLES:
            for k, v in self.values(t, linked=True).items():
                key = f"{t}.{k}"
                origin = f"= {LINKS[key][0]}" if key in LINKS else self.origins.get(key, "default")
                out.setdefault(t, {})[k] = {"value": v, "from": origin, **({"doc": field_doc(key)} if docs else {})}
        return out


# table -> its dataclass: the fields of PerfalignConfig (sources of links come first)
TABLES: dict[str, type] = {name: hint for name, hint in typing.get_type_hints(PerfalignConfig).items()
                           if dataclasses.is_dataclass(hint)}


def field_doc(key: str) -> str:
    """A setting's one-line doc: its field's comment in the dataclass, else, for a stage's field
    that is its TRL config's (``StageConfig``), TRL's help, else its link's source's doc."""
    table, name = key.split(".", 1)
    doc = static_setting(key)[2]
    if not doc and getattr(TABLES[table], "trl_config", None):
        doc = TABLES[table].trl_doc(name)
    return doc or (field_doc(LINKS[key][0]) if key in LINKS else "")


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return list(v)
    return str(v) if isinstance(v, Path) else v


def _parse_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw  # a bare string


def _parse_set_value(table: str, name: str, raw: str) -> Any:
    """A --set value: TOML, else a bare string; for a list setting, bare ``a,b`` is the list [a, b]
    (as its flag takes it)."""
    value = _parse_value(raw)
    hint = settings(table).get(name) if table in TABLES else None
    if value is raw and hint is not None and typing.get_origin(_scalar(hint)[0]) is tuple:
        return [_parse_value(v.strip()) for v in raw.split(",") if v.strip()]
    return value


def _coerce(where: str, hint: Any, value: Any, origin: str) -> Any:
    kind, optional = _scalar(hint)
    if optional and (value is None or (isinstance(value, str) and value.lower() in ("none", "null")
                                        and kind is not str) or (kind in (str, Path) and value == "")):
        return None  # TOML has no null: "none" (or "" for a text) unsets an optional setting
    if kind in _SCALARS:
        accepted = {bool: bool, int: int, float: (int, float)}.get(kind, str)  # a Path is given as a string
        if not isinstance(value, accepted) or (kind is not bool and isinstance(value, bool)):
            raise ConfigError(f"{where} = {value!r} (from {origin}): expected {kind.__name__}")
        return kind(value) if kind in (float, Path) else value
    item = typing.get_args(kind)[0]
    if isinstance(value, str) or not isinstance(value, (list, tuple)) \
            or not all(isinstance(v, item) and not isinstance(v, bool) for v in value):
        raise ConfigError(f"{where} = {value!r} (from {origin}): expected a list of {item.__name__}s "
                          "(['a', 'b'], or a,b with --set)")
    return tuple(value)


def _apply(cfg: dict, values: dict, origin: str, origins: dict[str, str], where: str, base: Path) -> None:
    """Merge a profile-shaped dict ({table: {key: value}}) into ``cfg``, refusing unknown keys;
    a relative path (of the keys holding paths) is resolved against ``base``."""
    for table, kv in values.items():
        if table not in TABLES:
            raise ConfigError(f"{where}: unknown table [{table}]; known: {', '.join(TABLES)}")
        if not isinstance(kv, dict):
            raise ConfigError(f"{where}: {table} must be a table")
        known = settings(table)
        for k, v in flatten(kv).items():
            if k not in known:
                hint = f" (set by {LINKS[f'{table}.{k}'][0]})" if f"{table}.{k}" in LINKS else ""
                raise ConfigError(f"unknown setting {table}.{k}{hint} (from {origin}); "
                                  f"[{table}] has: {', '.join(known)}")
            cfg[table][k] = v
            origins[f"{table}.{k}"] = origin
    for table, name in _PATH_KEYS:
        v = values.get(table, {}).get(name)
        if isinstance(v, str) and v and not v.startswith("hf:") and not Path(v).is_absolute():
            cfg[table][name] = os.path.normpath(base / v)


def flatten(kv: dict, prefix: str = "") -> dict[str, Any]:
    """{"measure": {"peak_n": 1}} (a TOML sub-table [grpo.measure]) -> {"measure.peak_n": 1}."""
    out: dict[str, Any] = {}
    for k, v in kv.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _read_profile(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"profile file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"profile file {path}: {e}") from None


def load_config(path: Path | str | None = None, profile: str | None = None, overrides: list[str] = (),
                flags: dict[str, Any] | None = None) -> PerfalignConfig:
    """The dataclasses' defaults, then the profile (config/profiles/<profile>.toml), then the file
    ``path`` (a profile of your own), then ``--set`` overrides, then the CLI's flags
    (``{"perf.source": ...}``; None values are ignored); typed and checked."""
    profile = profile or DEFAULT_PROFILE
    origins: dict[str, str] = {}
    cfg: dict[str, dict] = {t: {} for t in TABLES}
    pfile = PROFILES_DIR / f"{profile}.toml"
    if not pfile.is_file():
        raise ConfigError(f"unknown profile {profile!r}; have: {', '.join(profile_names())} "
                          f"(or give a file of your own with --config)")
    _apply(cfg, _read_profile(pfile), f"profile {profile}", origins, str(pfile), pfile.parent)
    if path:
        path = Path(path)
        _apply(cfg, _read_profile(path), str(path), origins, str(path), path.resolve().parent)
    sets: dict[str, dict[str, Any]] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        table, dot, name = key.strip().partition(".")
        if not sep or not dot or not name:
            raise ConfigError(f"--set {item!r}: expected table.key=value")
        sets.setdefault(table, {})[name] = _parse_set_value(table, name, value.strip())
    _apply(cfg, sets, "--set", origins, "--set", Path.cwd())  # like a flag's: the shell's
    for key, value in (flags or {}).items():
        if value is not None:
            table, name = key.split(".", 1)  # a flag's path is the shell's
            _apply(cfg, {table: {name: value}}, option_name(key), origins, key, Path.cwd())
    return _build(cfg, origins, profile, str(path) if path else None)


def _build(values: dict[str, dict], origins: dict[str, str], profile: str, config_file: str | None) -> PerfalignConfig:
    """Typed tables from the set values; linked fields from their sources; each table checked."""
    typed: dict[str, Any] = {}
    for table in TABLES:  # sources of links come first in TABLES
        known = settings(table)
        kv = {k: _coerce(f"{table}.{k}", known[k], v, origins.get(f"{table}.{k}", "default"))
              for k, v in values.get(table, {}).items() if k in known}
        done = types.SimpleNamespace(**typed)
        for key, (_, how) in LINKS.items():
            t, k = key.split(".", 1)
            if t == table:
                kv[k] = how(done)
        try:
            obj = _make(TABLES[table], kv)
            # ranges and choices; check_values where validate() also checks a run's inputs
            check = getattr(obj, "check_values", None) or getattr(obj, "validate", None)
            if check:
                check()
        except (ValueError, TypeError, FileNotFoundError) as e:
            given = [f"{table}.{k} from {origins[f'{table}.{k}']}" for k in kv
                     if not origins.get(f"{table}.{k}", "profile").startswith("profile")]
            raise ConfigError(f"{table}: {e}" + (f" ({', '.join(given)})" if given else "")) from None
        typed[table] = obj
    return PerfalignConfig(**typed, profile=profile, config_file=config_file, origins=origins)


def preset(table: str, profile: str = DEFAULT_PROFILE, **overrides: Any) -> Any:
    """One stage's config under a profile, with ``overrides`` (e.g. the run's paths): what the
    pipeline hands a library, for scripts and tests."""
    return dataclasses.replace(getattr(load_config(profile=profile), table), **overrides)


def defaults(table: str) -> dict[str, Any]:
    """The dataclass defaults of a table's settings (what a profile need not repeat)."""
    blank = _make(TABLES[table], {})
    return {k: _plain(attrgetter(k)(blank)) for k in settings(table)}
