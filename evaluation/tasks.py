"""The evaluation prompts of every task (paper §VI) in one shape, and the loader over all tasks.

Task names (the report's columns): ``codecontests`` (held-out CodeContests-Perf problems),
``pareval-serial`` / ``pareval-omp`` / ``pareval-mpi`` (data/pareval_sample) and ``polybench``
(data/polybench_sample). A task that cannot run here is *skipped* with its reason, never
silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import EvalConfig

TASK_LABELS = {
    "codecontests": "CodeContests",
    "pareval-serial": "ParEval Serial",
    "pareval-omp": "ParEval OpenMP",
    "pareval-mpi": "ParEval MPI",
    "polybench": "PolyBench",
}
CODE_GENERATION_TASKS = ("codecontests", "pareval-serial", "pareval-omp", "pareval-mpi")  # Fig. 5-6
TASK_GROUPS = ("codecontests", "pareval", "polybench")  # what EvalConfig.tasks selects


@dataclass
class EvalPrompt:
    """One prompt of one task: the text the model sees and how its samples are executed."""

    task: str                      # a TASK_LABELS key
    prompt_id: str
    text: str                      # the full model prompt (Listing 1 format)
    language: str                  # the language the prompt asks for
    timing: str                    # "cpu" or "wall": the clock the speedups use
    runner: Any                    # ContestSpec or DriverSpec: builds jobs, reads results
    references: dict[str, str] = field(default_factory=dict)          # oracle mode -> known solution
    expected_speedup: dict[str, float | None] = field(default_factory=dict)  # oracle mode -> known ratio

    @property
    def parallel(self) -> bool:
        return bool(getattr(self.runner, "parallel", False))


@dataclass
class Skipped:
    task: str
    prompt_id: str
    reason: str


def load_tasks(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """All prompts of the configured tasks (at most ``max_prompts_per_task`` each) and the
    skipped ones with reasons. Raises ValueError when nothing is left to evaluate."""
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    if "codecontests" in config.tasks:
        from .contests import load_contest_prompts

        p, s = load_contest_prompts(config)
        prompts += p
        skipped += s
    if "pareval" in config.tasks:
        from .pareval import load_pareval_prompts

        p, s = load_pareval_prompts(config)
        prompts += p
        skipped += s
    if "polybench" in config.tasks:
        from .polybench import load_polybench_prompts

        p, s = load_polybench_prompts(config)
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
