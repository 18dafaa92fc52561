"""What the configuration knows without importing the stage libraries: where the profiles are,
the default one, each setting's option name, and its type and field doc read from the dataclasses'
source (the tables of config/tables.py, the modules they import). The CLI builds its options from
this and starts without torch or Prefect; a test checks that this reading agrees with the imported
dataclasses."""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

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
    mod, cls = _class("perfalign.config.tables", "PerfalignConfig")
    for part in outer:  # the table's dataclass (a field of PerfalignConfig), then nested ones: "grpo.tiers.ok_reward"
        annotation, _, mod = _field(mod, cls, part)
        mod, cls = _class(mod, annotation)
    annotation, doc, _ = _field(mod, cls, last)
    parts = [p.strip() for p in annotation.split("|")]
    optional = "None" in parts
    (kind,) = [p for p in parts if p != "None"]
    return (tuple if kind.startswith("tuple[") else _TYPES[kind]), optional, doc


def option_name(key: str) -> str:
    """A setting's option: its field's name ("perf.time_limit_factor": --time-limit-factor) or OPTION_NAMES'."""
    return OPTION_NAMES.get(key, "--" + key.split(".", 1)[1].replace("_", "-").replace(".", "-"))
