"""Prompts: the task, the stage's permitted techniques (SQD: stated here, checked in code), and
elites of the problem's archive as seeds (this package's wording)."""
from __future__ import annotations

from .sqd import QDArchive, Stage
from .tasks import GrpoTask


def spec_prompt(task: GrpoTask, stage: Stage, archive: QDArchive | None, seeds: int = 2,
                elites: list[tuple[str, float, str]] | None = None) -> str:
    """The controlled family: the model answers with one spec line (spec.py). Short on purpose
    (the tiny model's context is cheap but its attention is weak): task, permitted techniques,
    up to ``seeds`` elites of the archive that the stage permits (``elites`` overrides them)."""
    allow = ",".join(sorted(stage.permitted)) or "none"
    lines = [f"{task.name} n={task.sizes.get('T')}", f"allow: {allow}"]
    if elites is None and archive:
        elites = [(n, e.gflops, e.completion) for n, e in archive.best(stage.permitted, seeds)]
    lines += [f"elite {g:.1f}: {comp.strip()}" for _, g, comp in elites or []]
    return "\n".join(lines) + "\nspec:"


def code_prompt(task: GrpoTask, stage: Stage, archive: QDArchive | None, seeds: int = 1) -> str:
    """Free-form C (the production profile's 14B/6.7B coder): statement, rules, seeds."""
    rules = ("Use only standard C/C++ (no BLAS or any external library). Optimization techniques permitted in "
             f"this stage: {stage.describe()}; using any other (OpenMP, SIMD, blocking, unrolling) is a violation.")
    parts = [task.statement, rules]
    if archive:
        for niche, e in archive.best(stage.permitted, seeds):
            parts.append(f"A previous program in niche {niche} reached {e.gflops:.1f} GFLOPS:\n"
                         f"```c\n{e.completion}\n```")
    parts.append("Answer with one ```c code block.")
    return "\n\n".join(parts)
