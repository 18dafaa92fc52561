"""CLI options generated from the config dataclasses: ``@config_options("perf.repeats", ...)``
adds one typer option per setting (named after the field, its type and help from the dataclass,
the config key in the help) and --profile, --config and --set, and hands the command
``conf.flags={"perf.repeats": ...}`` for ``load_config``, which checks them. One name per
setting across commands; an unset option leaves the profile's value.

Types and field docs are read from the dataclasses' source (the tables of flows/config.py, the
modules they import), not by importing them: the CLI starts without torch or Prefect, and
importing a stage library waits until a command loads the configuration (a test checks that
both readings agree)."""
from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer
from rich.markup import escape

_PACKAGE = Path(__file__).resolve().parents[1]  # the folder `perfalign` is imported from
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"  # the configuration's profiles (package data)
DEFAULT_PROFILE = "embedded"  # every command's profile without --profile
# Option names that are not the field's own: one name per concept across commands (the sandbox
# backend is --sandbox-backend, and `--backend` of `sandbox run` the sandbox too; synth's LLM is
# --llm-backend and --llm-model; the model a command trains is --base-model; --seeds are random seeds).
OPTION_NAMES = {"sandbox.backend": "--sandbox-backend", "sandbox.workers": "--workers",
                "kernel.interpret": "--triton-interpret", "grpo.n_workers": "--workers",
                "grpo.tiers.ok_reward": "--reward-mode", "grpo.model": "--base-model",
                "synth.backend": "--llm-backend", "synth.model": "--llm-model", "synth.seeds": "--seed-source",
                "eval.probe.repeats": "--timing-repeats", "eval.probe.clock": "--clock",
                "eval.probe.max_rel_se": "--max-rel-se"}
_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "Path": str}
GENERATED: set[str] = set()  # every key a command has an option for (a test checks them against the config)


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))


@functools.cache
def _module(mod: str) -> tuple[ast.Module, list[str]]:
    rel = Path(*mod.split(".")[1:])
    path = _PACKAGE / rel.with_suffix(".py")
    if not path.exists():
        path = _PACKAGE / rel / "__init__.py"
    text = path.read_text()
    return ast.parse(text), text.splitlines()


def _class(mod: str, name: str) -> tuple[str, ast.ClassDef]:
    """The module defining ``name`` as seen from ``mod`` and its class node (following imports)."""
    tree, _ = _module(mod)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return mod, node
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            parts = mod.split(".")
            is_package = (_PACKAGE / Path(*parts[1:]) / "__init__.py").exists()  # "." is the package itself
            base = parts[:len(parts) - node.level + is_package] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            alias = next(a.name for a in node.names if (a.asname or a.name) == name)
            return _class(target, alias)
    raise KeyError(f"{name} not found from {mod}")


def _field(mod: str, cls: ast.ClassDef, name: str) -> tuple[str, str | None, str]:
    """(annotation, trailing comment, defining module) of a field, in the class or its bases."""
    _, lines = _module(mod)
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            line = lines[node.lineno - 1]
            return ast.unparse(node.annotation), (line.split("#", 1)[1].strip() if "#" in line else None), mod
    for base in cls.bases:
        if isinstance(base, ast.Name):
            try:
                return _field(*_class(mod, base.id), name)
            except KeyError:
                continue
    raise KeyError(name)


@functools.cache
def static_setting(key: str) -> tuple[Any, bool, str | None]:
    """(the setting's type: int, float, str, bool or tuple; whether None is allowed; its field doc)."""
    *outer, last = key.split(".")
    mod, cls = _class("perfalign.flows.config", "PerfalignConfig")
    for part in outer:  # the table's dataclass (a field of PerfalignConfig), then nested ones: "grpo.tiers.ok_reward"
        annotation, _, mod = _field(mod, cls, part)
        mod, cls = _class(mod, annotation)
    annotation, doc, _ = _field(mod, cls, last)
    parts = [p.strip() for p in annotation.split("|")]
    optional = "None" in parts
    (kind,) = [p for p in parts if p != "None"]
    return (tuple if kind.startswith("tuple[") else _TYPES[kind]), optional, doc


def option_help(key: str, text: str | None = None) -> str:
    """The help text with its config key shown (escaped: Rich markup would eat "[perf.repeats]")."""
    text = (text or static_setting(key)[2] or key.split(".", 1)[1].replace("_", " ")).rstrip(". ")
    return f"{text} {escape(f'[{key}]')}"


def option_name(key: str) -> str:
    """A setting's option: its field's name ("perf.time_limit_factor": --time-limit-factor) or OPTION_NAMES'."""
    return OPTION_NAMES.get(key, "--" + key.split(".", 1)[1].replace("_", "-").replace(".", "-"))


def _option(key: str, help: str | None) -> tuple[Any, Any]:
    kind = static_setting(key)[0]
    decl = option_name(key)
    if kind is bool:
        return Optional[bool], typer.Option(None, f"{decl}/--no-{decl[2:]}", help=option_help(key, help))
    if kind is tuple:
        return Optional[str], typer.Option(None, decl, help=option_help(key, help) + " (comma-separated)")
    return Optional[kind], typer.Option(None, decl, help=option_help(key, help))


@dataclass(frozen=True)
class ConfigArgs:
    """--profile, --config and --set as given, and the command's flags: what load_config takes."""

    profile: str
    config: Optional[Path]
    sets: list[str]
    flags: dict[str, Any]


def _common_params(kind: Any) -> list[inspect.Parameter]:
    """--profile, --config and --set: every command that reads the configuration has them."""
    profiles = ", ".join(profile_names())
    return [
        inspect.Parameter("profile", kind, annotation=str, default=typer.Option(
            DEFAULT_PROFILE, "--profile", help=f"Config profile: {profiles} (flows/profiles/NAME.toml).")),
        inspect.Parameter("config", kind, annotation=Optional[Path], default=typer.Option(
            None, "--config", help="A profile file of your own (TOML), applied after --profile.")),
        inspect.Parameter("set_", kind, annotation=Optional[List[str]], default=typer.Option(
            None, "--set", help="Override one setting: table.key=value (repeatable).")),
    ]


def config_options(*keys: str, help: dict[str, str] | None = None) -> Callable:
    """Put --profile, --config and --set where the command has its parameter ``conf`` and add an
    option per config key; the command gets ``conf``, a ConfigArgs whose ``flags`` map each key to
    its value (None where unset; lists split at commas)."""
    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn, eval_str=True)
        params = []
        for p in sig.parameters.values():
            params += _common_params(p.kind) if p.name == "conf" else [p]
        names = {key: "cfg__" + key.replace(".", "__") for key in keys}
        GENERATED.update(keys)
        for key in keys:
            annotation, default = _option(key, (help or {}).get(key))
            params.append(inspect.Parameter(names[key], inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            flags = {}
            for key, pname in names.items():
                value = kwargs.pop(pname)
                if isinstance(value, str) and static_setting(key)[0] is tuple:
                    value = [v.strip() for v in value.split(",") if v.strip()]
                flags[key] = value
            conf = ConfigArgs(kwargs.pop("profile"), kwargs.pop("config"), list(kwargs.pop("set_") or []), flags)
            return fn(**kwargs, conf=conf)

        command.__signature__ = sig.replace(parameters=params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the new signature, not the function's
        return command
    return decorate
