"""The evaluation prompts of every task (paper §VI) in one shape, and the loader over all tasks.

Task names (the report's columns): ``codecontests`` (held-out CodeContests-Perf problems),
``pareval-serial`` / ``pareval-omp`` / ``pareval-mpi`` (data/pareval_sample), ``polybench``
(data/polybench_sample) and ``kernelbench`` (a KernelBench checkout, scored by ``kernels``). A task that cannot run here is *skipped* with its reason, never
silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TASK_LABELS = {
    "codecontests": "CodeContests",
    "pareval-serial": "ParEval Serial",
    "pareval-omp": "ParEval OpenMP",
    "pareval-mpi": "ParEval MPI",
    "polybench": "PolyBench",
    "controlled": "Controlled (held-out)",
    "kernelbench": "KernelBench (CPU)",
}
CODE_GENERATION_TASKS = ("codecontests", "pareval-serial", "pareval-omp", "pareval-mpi")  # Fig. 5-6
TASK_GROUPS = ("codecontests", "pareval", "polybench")  # what EvalConfig.tasks selects
# selectable, not default: alignment.controlled's held-out prompts; KernelBench (needs a checkout, torch in the sandbox)
OPTIONAL_TASK_GROUPS = ("controlled", "kernelbench")


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
