"""The evaluation task interface (modelled on SandboxFusion's ``get_prompts`` / ``evaluate_single``).

A task (one file under tasks/) loads its prompts from the configuration and scores the samples of
all models on its prompts; evaluate.py drives every task through ``EvalTask`` alone. ``score``
takes all of a task's prompts at once: the sandbox-job tasks pool the programs of every prompt
(identical programs run once, the workers stay busy), the probe and kernel tasks score prompt by
prompt. The shapes tasks and scoring engines share are in ``evaluation/records.py``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Generic

from ..records import CandidateRequest, EvalPrompt, Responses, Scored, ScoreRun, Skipped, Spec

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig


class EvalTask(ABC, Generic[Spec]):
    """One benchmark. ``name`` is what ``EvalConfig.tasks`` selects; ``labels`` are the task labels
    its prompts carry (the report's columns), e.g. pareval -> pareval-serial, pareval-omp, ..."""

    name: ClassVar[str]
    labels: ClassVar[dict[str, str]]     # task label -> the report's name for it

    @abstractmethod
    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt[Spec]], list[Skipped]]:
        """The task's prompts (sorted by id) and the prompts it cannot run here, with why."""

    @abstractmethod
    def score(self, prompts: list[EvalPrompt[Spec]], responses: Responses, run: ScoreRun) -> Scored:
        """Run and judge every response of every model on ``prompts`` (``responses[model][i]``
        answers ``prompts[i]``); each prompt gets a baseline measured in the same run."""

    def serial(self, prompts: list[EvalPrompt[Spec]]) -> bool:
        """Whether every program of ``prompts`` runs on one core: then this task is scored beside
        the other such tasks, their programs sharing the sandbox's slots (never more at once than
        it has); otherwise it is scored alone, after them."""
        return False

    # One candidate on one problem (`perfalign eval score`, RL rewards); a task that offers it
    # overrides both. SandboxFusion's ``evaluate_single``.
    scores_one_by_one: ClassVar[bool] = False

    def problem_names(self, request: CandidateRequest) -> list[dict] | str:
        """The problems ``score_candidate`` accepts, each {"problem", "models"}; or a note saying
        what the listing needs (e.g. a checkout folder)."""
        raise NotImplementedError(f"{self.name} scores prompts in batches only")

    def score_candidate(self, problem: str, code: str, request: CandidateRequest,
                        sandbox: "Sandbox") -> "tuple[ProbeScore, dict]":
        """Score ``code`` on ``problem`` against its baseline measured in the same session: raises
        ScoreInputError for a request that names nothing scorable; anything the candidate does is a score."""
        raise NotImplementedError(f"{self.name} scores prompts in batches only")
