"""The loader over every configured task (the task modules import the shapes in tasks.py; this
module is the only one that imports the task modules)."""
from __future__ import annotations

from .config import EvalConfig
from .contests import load_contest_prompts
from .controlled import load_controlled_prompts
from .kernelbench import load_kernel_prompts
from .pareval import load_pareval_prompts
from .polybench import load_polybench_prompts
from .tasks import EvalPrompt, Skipped


# task group -> its loader, in the report's order
LOADERS = {"codecontests": load_contest_prompts, "pareval": load_pareval_prompts, "polybench": load_polybench_prompts,
           "controlled": load_controlled_prompts, "kernelbench": load_kernel_prompts}


def load_tasks(config: EvalConfig) -> tuple[list[EvalPrompt], list[Skipped]]:
    """All prompts of the configured tasks (at most ``max_prompts_per_task`` each) and the
    skipped ones with reasons. Raises ValueError when nothing is left to evaluate."""
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    for group, load in LOADERS.items():
        if group in config.tasks:
            p, s = load(config)
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
