"""CLI options generated from the config dataclasses: ``@config_options("perf.repeats", ...)``
adds one typer option per setting (named after the field, its type and help from the dataclass,
the config key in the help) and hands the command ``flags={"perf.repeats": ...}`` for
``load_config``. One name per setting across commands; unset options leave the profile's value."""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import typing
from typing import Any, Callable, Optional

import typer
from rich.markup import escape

from . import config as C

# Option names that are not the field's own (the sandbox backend is --sandbox-backend everywhere).
OPTION_NAMES = {"sandbox.backend": "--sandbox-backend", "sandbox.workers": "--workers",
                "kernel.interpret": "--triton-interpret"}


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """Each field's trailing comment in the dataclass's source (its field doc), inherited too."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass) or klass is object:
            continue
        try:
            lines, _ = inspect.getsourcelines(klass)
        except (OSError, TypeError):
            continue
        for node in ast.parse(inspect.cleandoc("".join(lines)) if lines[0].startswith(" ") else "".join(lines)).body[0].body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                line = lines[node.lineno - 1]
                if "#" in line:
                    docs[node.target.id] = line.split("#", 1)[1].strip()
    return docs


def option_help(key: str, text: str | None = None) -> str:
    """The help text with its config key shown (escaped: Rich markup would eat "[perf.repeats]")."""
    table, name = key.split(".")
    text = (text or field_docs(C.TABLES[table]).get(name) or name.replace("_", " ")).rstrip(". ")
    return f"{text[:1].upper()}{text[1:]} {escape(f'[{key}]')}"


def _option(key: str, help: str | None) -> tuple[Any, Any]:
    table, name = key.split(".")
    kind, _ = C._scalar(C.settings(table)[name])
    decl = OPTION_NAMES.get(key, f"--{name.replace('_', '-')}")
    if kind is bool:
        return Optional[bool], typer.Option(None, f"{decl}/--no-{decl[2:]}", help=option_help(key, help))
    if typing.get_origin(kind) is tuple:
        return Optional[str], typer.Option(None, decl, help=option_help(key, help) + " (comma-separated)")
    return Optional[kind if kind in (int, float) else str], typer.Option(None, decl, help=option_help(key, help))


def config_options(*keys: str, help: dict[str, str] | None = None) -> Callable:
    """Add an option per config key to a typer command; the command gets ``flags`` (key -> value,
    None where unset; lists split at commas)."""
    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
        params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
                  if p.name != "flags"]
        names = {key: key.replace(".", "__") for key in keys}
        for key in keys:
            annotation, default = _option(key, (help or {}).get(key))
            params.append(inspect.Parameter(names[key], inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            flags = {}
            for key, pname in names.items():
                value = kwargs.pop(pname)
                if isinstance(value, str) and typing.get_origin(C._scalar(C.settings(key.split(".")[0])[key.split(".")[1]])[0]) is tuple:
                    value = [v.strip() for v in value.split(",") if v.strip()]
                flags[key] = value
            return fn(**kwargs, flags=flags)

        command.__signature__ = sig.replace(parameters=params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the new signature, not the function's
        return command
    return decorate


def profile_option() -> Any:
    return typer.Option(C.DEFAULT_PROFILE, "--profile",
                        help=f"Config profile: {', '.join(C.profile_names())} (flows/profiles/NAME.toml).")


def config_file_option() -> Any:
    return typer.Option(None, "--config", help="A profile file of your own (TOML), applied after --profile.")


def set_option() -> Any:
    return typer.Option(None, "--set", help="Override one setting: table.key=value (repeatable).")
