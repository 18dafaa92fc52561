"""KernelBench problems: a PyTorch ``Model`` with ``get_inputs()`` / ``get_init_inputs()``, loaded
from a user's checkout (or ``../shared/external/kernelbench``) by path, never copied.

Sizes: KernelBench's are GPU-sized. On CPU every module-level integer size constant >= 16 is
multiplied by the scale (``kernelenv.sizes.scale_value``: max(1, round(v * s)); smaller integers
are kernel sizes, strides, dims or groups and stay); constants derived from them follow.
"""
from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from .sizes import free_constants, rewrite_constants, scale_value, size_constants


class ProblemError(ValueError):
    """A file that is not a usable KernelBench problem (the message says why)."""


@dataclass(frozen=True)
class KernelProblem:
    path: Path
    name: str            # e.g. "level1/19_ReLU"
    level: int | None
    source: str
    sizes: dict = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    @property
    def free_sizes(self) -> list[str]:
        """Size constants a trial may vary (they only shape the inputs)."""
        return free_constants(self.source)

    def scaled_sizes(self, scale: float) -> dict:
        return {n: scale_value(v, scale) for n, v in self.sizes.items()}

    def scaled_source(self, scale: float) -> str:
        return self.source if scale == 1.0 else rewrite_constants(self.source, self.scaled_sizes(scale))


def _level(path: Path) -> int | None:
    for part in reversed(path.parts[:-1]):
        m = re.fullmatch(r"level_?(\d+)", part.lower())
        if m:
            return int(m.group(1))
    return None


def load_problem(path: str | Path) -> KernelProblem:
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProblemError(f"{path}: cannot read ({e})") from None
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise ProblemError(f"{path}: not valid Python ({e.msg}, line {e.lineno})") from None
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        raise ProblemError(f"{path}: not a KernelBench problem (missing {', '.join(missing)})")
    level = _level(path)
    name = f"level{level}/{path.stem}" if level is not None else path.stem
    return KernelProblem(path=path, name=name, level=level, source=source, sizes=size_constants(source))


def _order(path: Path) -> tuple:
    m = re.match(r"(\d+)", path.stem)
    return (_level(path) or 0, int(m.group(1)) if m else 1 << 30, path.name)


def load_problems(directory: str | Path) -> tuple[list[KernelProblem], list[dict]]:
    """Every problem under ``directory`` (recursively, by level then number) and a record for
    each file that is not one."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ProblemError(f"{directory}: not a directory")
    problems, errors = [], []
    for path in sorted(directory.rglob("*.py"), key=_order):
        try:
            problems.append(load_problem(path))
        except ProblemError as e:
            errors.append({"path": str(path), "error": str(e)})
    return problems, errors


def reference_candidate(problem: KernelProblem) -> str:
    """The reference-as-candidate oracle: the problem's own Model under the name ModelNew."""
    return problem.source + "\n\nModelNew = Model\n"


def find_candidate(problem: KernelProblem, candidates: Path) -> Path | None:
    """The candidate for ``problem`` in a directory: ``<level dir>/<stem>.py`` or ``<stem>.py``."""
    level_dir = [f"level{problem.level}/{problem.path.name}"] if problem.level is not None else []
    for rel in level_dir + [problem.path.name]:
        p = candidates / rel
        if p.is_file():
            return p
    return None
