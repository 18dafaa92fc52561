"""Task name -> task, in the report's order, and the loader over every configured task. A task
that cannot run here is *skipped* with its reason, never silently dropped."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import EvalPrompt, Skipped
from .base import EvalTask
from .codecontests import CodeContestsTask
from .controlled import ControlledTask
from .humaneval import HumanEvalTask
from .kernelbench import KernelBenchTask
from .pareval import ParEvalTask
from .polybench import PolyBenchTask

if TYPE_CHECKING:
    from ..config import EvalConfig

TASKS: dict[str, EvalTask] = {t.name: t for t in (CodeContestsTask(), ParEvalTask(), PolyBenchTask(),
                                                   ControlledTask(), KernelBenchTask(), HumanEvalTask())}
TASK_LABELS = {label: title for t in TASKS.values() for label, title in t.labels.items()}
CODE_GENERATION_TASKS = ("codecontests", "pareval-serial", "pareval-omp", "pareval-mpi")  # Fig. 5-6


def load_tasks(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """All prompts of the configured tasks (at most ``max_prompts_per_task`` each) and the
    skipped ones with reasons. Raises ValueError when nothing is left to evaluate."""
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    for name, task in TASKS.items():
        if name in config.tasks:
            p, s = task.load(config)
            prompts += p
            skipped += s
    ids = [p.prompt_id for p in prompts]
    if len(set(ids)) != len(ids):  # results are keyed by prompt id
        raise ValueError(f"duplicate prompt ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    prompts, dropped = _limit(prompts, config.max_prompts_per_task)
    if not prompts:
        why = "; ".join(f"{s.task}/{s.prompt_id}: {s.reason}" for s in skipped[:10]) or "no task selected"
        raise ValueError(f"empty task set: no prompt to evaluate for tasks {list(config.tasks)} ({why})")
    return prompts, skipped + dropped


def task_of(prompt: EvalPrompt) -> EvalTask:
    """The task a prompt belongs to (its label is one of the task's labels)."""
    return next(t for t in TASKS.values() if prompt.task in t.labels)


def _limit(prompts: list[EvalPrompt], limit: int | None) -> tuple[list[EvalPrompt], list[Skipped]]:
    """The first ``limit`` prompts of each task (loaders sort by id: deterministic)."""
    if limit is None:
        return prompts, []
    kept, dropped, seen = [], [], {}
    for p in prompts:
        seen[p.task] = seen.get(p.task, 0) + 1
        if seen[p.task] <= limit:
            kept.append(p)
        else:
            dropped.append(Skipped(p.task, p.prompt_id, f"over max_prompts_per_task={limit}"))
    return kept, dropped
