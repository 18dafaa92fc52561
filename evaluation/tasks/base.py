"""The evaluation task interface (modelled on SandboxFusion's ``get_prompts`` / ``evaluate_single``)
and the shapes every task shares: a prompt, a skipped prompt, a sample's result, a baseline.

A task (one file under tasks/) loads its prompts from the configuration and scores the samples of
all models on its prompts; evaluate.py drives every task through ``EvalTask`` alone. ``score``
takes all of a task's prompts at once: the sandbox-job tasks pool the programs of every prompt
(identical programs run once, the workers stay busy), the probe and kernel tasks score prompt by
prompt.
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, NamedTuple, TypeVar

from perfalign.common.prompts import extract_code
from perfalign.measure.harness import ProbeSettings

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig

Spec = TypeVar("Spec")
# model label -> per prompt (in the prompts' order) -> its sampled responses
Responses = dict[str, list[list[str]]]


@dataclass
class EvalPrompt(Generic[Spec]):
    """One prompt of one task: the text the model sees and how its samples run (``spec``, the
    task's own type: ContestSpec, ProbeProblem or KernelSpec)."""

    task: str                      # a task label (EvalTask.labels)
    prompt_id: str
    text: str                      # the full model prompt (Listing 1 format)
    language: str                  # the language the prompt asks for
    timing: str                    # "cpu" or "wall": the clock the speedups use
    spec: Spec
    references: dict[str, str] = field(default_factory=dict)          # oracle mode -> known solution
    expected_speedup: dict[str, float | None] = field(default_factory=dict)  # oracle mode -> known ratio


@dataclass
class Skipped:
    task: str
    prompt_id: str
    reason: str


@dataclass
class SampleResult:
    model: str
    task: str
    prompt_id: str
    index: int
    extracted: str             # "fence" (a ``` block), "raw" (the whole response) or "none"
    language: str | None
    verdict: str               # sandbox verdict, or NO_CODE / WRONG_LANGUAGE / NO_RESULT
    correct: bool
    runtime_s: float | None
    baseline_s: float | None
    speedup: float             # baseline_s / runtime_s when correct, else 0
    code_sha: str | None
    message: str = ""
    times_s: list[float] = field(default_factory=list)  # every timed repeat / test (the task's clock)
    flags: list[str] = field(default_factory=list)      # the harness's: implausible, capped, over budget...
    inprocess_speedup: float | None = None              # diagnostic (probe tasks): the driver's own clock
    round_speedups: list[float] = field(default_factory=list)  # probe tasks: one per timed round
    rel_se: float | None = None                          # probe tasks: the speedup's estimated relative error

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class BaselineResult:
    prompt_id: str
    task: str
    timing: str
    runtime_s: float | None
    verdict: str
    source: str                # "measured" (driver run now) or "dataset" (contest median)
    message: str = ""
    times_s: list[float] = field(default_factory=list)   # the timed calls of the run used
    run_runtimes_s: list[float | None] = field(default_factory=list)  # every baseline run


class Scored(NamedTuple):
    """What a task's ``score`` returns: every sample's result, every prompt's baseline, and
    notes for the report's sandbox section (e.g. how contest baselines were rescaled)."""

    samples: list[SampleResult]
    baselines: dict[str, BaselineResult]
    notes: dict | None = None


@dataclass
class CandidateRequest:
    """What `perfalign eval score` asks of one candidate on one problem (``EvalTask.score_candidate``):
    where the suite is, the execution model, the language and how to measure."""

    model: str = "serial"               # execution model (pareval / polybench: serial, omp, mpi)
    language: str = "cpp"               # the candidate's language (codecontests)
    pareval_dir: str | None = None
    polybench_dir: str | None = None
    codecontests: str | None = None     # a CodeContests-Perf folder or raw source; None: the bundled sample
    problem_size: str = "reduced"       # measure.harness.PROBLEM_SIZES
    threads: int = 2
    ranks: int = 2
    probe: ProbeSettings = field(default_factory=ProbeSettings)  # how to measure (contests: its repeats and clock)


class ScoreInputError(ValueError):
    """The request names no scorable problem (a bad suite, problem, model or folder)."""


@dataclass
class ScoreRun:
    """Where and how a task scores: the open sandbox and the evaluation's configuration."""

    sandbox: "Sandbox | None"
    config: "EvalConfig"


class EvalTask(ABC, Generic[Spec]):
    """One benchmark. ``name`` is what ``EvalConfig.tasks`` selects; ``labels`` are the task labels
    its prompts carry (the report's columns), e.g. pareval -> pareval-serial, pareval-omp, ..."""

    name: ClassVar[str]
    labels: ClassVar[dict[str, str]]     # task label -> the report's name for it
    default: ClassVar[bool] = True       # selected unless EvalConfig.tasks says otherwise

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


def extract_candidate(response: str, accept_unfenced: bool = True) -> tuple[str | None, str | None, str]:
    """(code, fence language, how) of a response: its first ``` block, else (optionally) the
    whole response, else nothing."""
    code, lang = extract_code(response)
    if code is not None:
        return code, lang, "fence"
    if accept_unfenced and response.strip():
        return response.strip("\n"), None, "raw"
    return None, None, "none"


def new_sample(model: str, p: EvalPrompt, index: int, code: str | None, how: str, language: str | None,
               sha: str | None = None) -> SampleResult:
    """A sample not yet judged; NO_CODE already when the response holds none."""
    if sha is None and code is not None:
        sha = hashlib.sha256(code.encode()).hexdigest()[:16]
    r = SampleResult(model, p.task, p.prompt_id, index, how, language, "", False, None, None, 0.0, sha)
    if code is None:
        r.verdict, r.message = "NO_CODE", "the response holds no code"
    return r
