"""The shapes the evaluation's tasks and its scoring engines share: a prompt, a skipped prompt, a
sample's result, a baseline, what a task's ``score`` returns, a one-candidate request, and the
helpers that make a sample from a response; the scores per (model, task) and the report's record.
The task interface itself is ``tasks/base.py``.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from perfalign.common.prompts import extract_code
from perfalign.measure.harness import ProbeSettings

if TYPE_CHECKING:
    from perfalign.sandbox import Sandbox

    from .config import EvalConfig

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


@dataclass
class PromptScore:
    prompt_id: str
    n: int
    correct: int
    pass_at: dict[str, float]
    speedup_at: dict[str, float]
    baseline_s: float | None
    speedups: list[float]
    verdicts: dict[str, int]


@dataclass
class TaskScore:
    model: str
    task: str
    timing: str
    prompts: int
    samples: int
    pass_at: dict[str, float]       # "k" -> mean over prompts (Eq. 9)
    speedup_at: dict[str, float]    # "k" -> mean over prompts (Eq. 10)
    verdicts: dict[str, int]
    per_prompt: list[PromptScore] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict) -> "TaskScore":
        return cls(**{**d, "per_prompt": [PromptScore(**p) for p in d.get("per_prompt", [])]})

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class EvalReport:
    created_at: str
    host: dict[str, Any]
    sandbox: dict[str, Any]
    config: dict[str, Any]
    models: list[dict[str, Any]]          # label, ref, kind, finetune {stage, metrics}, generation_s
    scores: list[TaskScore]
    skipped: list[dict[str, str]] = field(default_factory=list)
    excluded: list[dict[str, str]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    oracle_checks: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)

    def score(self, model: str, task: str) -> TaskScore | None:
        return next((s for s in self.scores if s.model == model and s.task == task), None)

    def has_task(self, task: str) -> bool:
        return any(s.task == task for s in self.scores) or any(s["task"] == task for s in self.skipped)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # the scores too, field by field (TaskScore.to_dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "EvalReport":
        return cls(**{**d, "scores": [TaskScore.from_dict(s) for s in d["scores"]]})
