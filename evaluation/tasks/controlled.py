"""The controlled task's held-out prompts (perfdata.controlled) as the evaluation task
``controlled``: 12 Python problems of the family the tiny model is trained on in the embedded
main job, never seen in training. Executed and scored like the contest problems (all tests
pass; CPU time, mean over tests, timed in interleaved rounds beside the baseline: the medium
reference, the median of the three measured references, re-run like a contest's median submission)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from perfalign.perfdata.controlled import LANG, TIME_LIMIT_S, load_controlled_task
from perfalign.sandbox import Limits, TestCase

from ..records import EvalPrompt, Skipped
from ..sandbox_jobs import jobs_serial, score_jobs
from .base import EvalTask
from .codecontests import ContestSpec

if TYPE_CHECKING:
    from ..config import EvalConfig

TASK = "controlled"


class ControlledTask(EvalTask[ContestSpec]):
    name = TASK
    labels = {TASK: "Controlled (held-out)"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt[ContestSpec]], list[Skipped]]:
        if not config.controlled_dir:
            return [], [Skipped(TASK, "*", "no controlled_dir: the pipeline's controlled stage builds one with "
                                           "triplets.controlled_task = true")]
        task = load_controlled_task(config.controlled_dir)
        prompts = []
        for inst in sorted(task.heldout, key=lambda i: i.problem_id):
            pid, (ins, outs) = inst.problem_id, inst.tests()
            base = task.baseline_s(pid)
            spec = ContestSpec(pid, [TestCase(i, o) for i, o in zip(ins, outs)],
                               Limits(time_s=TIME_LIMIT_S, memory_mb=256), {LANG: base})
            kinds = {"reference": "medium", "slow": "slow", "fast": "fast"}
            prompts.append(EvalPrompt(TASK, pid, inst.prompt, LANG, "cpu", spec,
                                      {mode: inst.program(kind) for mode, kind in kinds.items()},
                                      {mode: base / task.runtimes[pid][kind] for mode, kind in kinds.items()}))
        return prompts, []

    score = staticmethod(score_jobs)
    serial = staticmethod(jobs_serial)
