"""CLI options generated from the config dataclasses: ``@config_options("perf.repeats", ...)``
adds one typer option per setting (named after the field, its type and help from the dataclass,
the config key in the help) and --profile, --config and --set, and hands the command
``conf.flags={"perf.repeats": ...}`` for ``load_config``, which checks them. One name per
setting across commands; an unset option leaves the profile's value.

Types and field docs come from config.fields, which reads the dataclasses' source: the CLI starts
without torch or Prefect, and a stage library is imported only when a command loads the configuration."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer
from rich.markup import escape

from perfalign.config.fields import DEFAULT_PROFILE, option_name, profile_names, static_setting

GENERATED: set[str] = set()  # every key a command has an option for (a test checks them against the config)


def option_help(key: str, text: str | None = None) -> str:
    """The help text with its config key shown (escaped: Rich markup would eat "[perf.repeats]")."""
    text = (text or static_setting(key)[2] or key.split(".", 1)[1].replace("_", " ")).rstrip(". ")
    return f"{text} {escape(f'[{key}]')}"


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
            DEFAULT_PROFILE, "--profile", help=f"Config profile: {profiles} (config/profiles/NAME.toml).")),
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
