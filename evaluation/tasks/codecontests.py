"""Code generation on held-out contest problems (paper §VI-A) from a CodeContests-Perf folder.

Prompt: the problem statement in the Listing 1 instruction format. A sample is correct when it
passes all of the problem's tests in the sandbox; it is timed beside the dataset's median-runtime
correct submission in the prompt's language by the contest protocol (evaluation/sandbox_jobs.py,
measure/contest.py): the mean over tests of the CPU time, in interleaved rounds. A sample in
another language: its own runs against the dataset's median runtime for that language, rescaled
by the ratio of the sandbox calibration figures if the dataset was measured on another host.

One candidate (`perfalign eval score --suite codecontests`): the problem comes from a
CodeContests-Perf folder or a raw source (``load_contest_problem``) and is scored by the contest
protocol of measure/contest.py (its baseline re-run in the same rounds).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perfalign.common.paths import bundled
from perfalign.common.prompts import instruction_prompt
from perfalign.measure.contest import ContestProblem, ContestSettings, score_contest
from perfalign.perfdata.shards import dataset_files, read_rows
from perfalign.perfdata.submissions import MEASURED_COLUMNS, language_medians, measured_by_problem
from perfalign.sandbox import Job, Language, Limits, RunResult, TestCase, Verdict
from perfalign.sandbox.calibration import host_id
from perfalign.sandbox.clock import DEFAULT_CLOCK, DETERMINISTIC

from ..records import CandidateRequest, EvalPrompt, Responses, Scored, ScoreInputError, ScoreRun, Skipped
from ..sandbox_jobs import Measurement, jobs_serial, score_jobs
from .base import EvalTask

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig

_PROBLEM_COLUMNS = ("problem_id", "description", "held_out", "time_limit_s", "memory_limit_mb", "test_inputs",
                    "test_outputs")
_SUBMISSION_COLUMNS = (*MEASURED_COLUMNS, "solution", "host", "calibration_cpu_s")


@dataclass
class ContestSpec:
    problem_id: str
    tests: list[TestCase]
    limits: Limits
    baselines: dict[str, float]                       # language -> median runtime of correct submissions
    hosts: set[str] = field(default_factory=set)      # where the dataset was measured
    calibration_cpu_s: float | None = None            # the dataset's sandbox calibration figure
    baseline_scale: float = 1.0                       # set by rescale_baselines on another host
    clock: str = DEFAULT_CLOCK                        # EvalConfig.probe.clock: measures samples and re-run baselines
    parallel = False
    baseline_source = "measured (median submission re-run)"

    def job(self, code: str, language: str, repeats: int = 1) -> Job:
        return Job(code, language, self.tests, self.limits, repeats=repeats, stop_on_failure=True, clock=self.clock)

    def measure(self, result: RunResult) -> Measurement:
        if not result.ok:
            msg = result.compile.message if result.verdict is Verdict.COMPILE_ERROR else result.message
            return Measurement(False, None, result.verdict.value, (msg or "")[:2000])
        if result.clock in DETERMINISTIC:  # the count (mean over tests), like the re-run baseline beside it
            counts = [float(t.cycles if result.clock == "cycles" else t.instructions) for t in result.tests]
            return Measurement(True, sum(counts) / len(counts), Verdict.OK.value, "", counts)
        return Measurement(True, result.mean_cpu_time_s, Verdict.OK.value, "",
                           [t.cpu_time_s for t in result.tests if t.cpu_time_s is not None])

    def baseline_s(self, language: str) -> float | None:
        if self.clock in DETERMINISTIC:  # the dataset's medians are CPU seconds: never compared with a count
            return None
        base = self.baselines.get(language)
        return None if base is None else base * self.baseline_scale


class CodeContestsTask(EvalTask[ContestSpec]):
    """Held-out CodeContests-Perf problems; samples run as sandbox jobs on all tests."""

    name = "codecontests"
    labels = {"codecontests": "CodeContests"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt[ContestSpec]], list[Skipped]]:
        lang = config.contest_language
        problems = [p for p in read_rows(config.codecontests_dir, "problems", _PROBLEM_COLUMNS) if p["held_out"]]
        if not problems:
            return [], [Skipped("codecontests", "*", f"no held-out problem in {config.codecontests_dir}")]
        correct = measured_by_problem(read_rows(config.codecontests_dir, "submissions", _SUBMISSION_COLUMNS))
        prompts, skipped = [], []
        for p in sorted(problems, key=lambda r: r["problem_id"]):
            by_lang = correct.get(p["problem_id"], {})
            own = sorted(by_lang.get(lang, []), key=lambda s: s["runtime_s"])
            if not own:
                skipped.append(Skipped("codecontests", p["problem_id"],
                                       f"no measured correct {lang} submission: no baseline"))
                continue
            baselines = language_medians(by_lang)
            median = baselines[lang]
            picks = {"reference": _median_submission(own, median), "slow": own[-1], "fast": own[0]}
            used = [s for ss in by_lang.values() for s in ss]
            cals = [s["calibration_cpu_s"] for s in used if s["calibration_cpu_s"]]
            spec = ContestSpec(
                p["problem_id"], [TestCase(i, o) for i, o in zip(p["test_inputs"], p["test_outputs"])],
                Limits(time_s=float(p["time_limit_s"]), memory_mb=int(p["memory_limit_mb"])), baselines,
                {s["host"] for s in used if s["host"]}, statistics.median(cals) if cals else None,
                clock=config.probe.clock)
            prompts.append(EvalPrompt(
                "codecontests", p["problem_id"], instruction_prompt(p["description"], lang), lang, "cpu", spec,
                {k: s["solution"] for k, s in picks.items()},
                {k: median / max(s["runtime_s"], 1e-9) for k, s in picks.items()}))
        return prompts, skipped

    serial = staticmethod(jobs_serial)

    def score(self, prompts: list[EvalPrompt[ContestSpec]], responses: Responses, run: ScoreRun) -> Scored:
        # the baselines are re-run; the rescaling only applies to samples in another language
        # than the prompt's (their baseline is the dataset's median)
        rescaled = rescale_baselines(prompts, run.sandbox.calibration())
        samples, baselines, _ = score_jobs(prompts, responses, run)
        return Scored(samples, baselines, {"contest_baseline_rescaling": rescaled})

    scores_one_by_one = True

    def problem_names(self, request: CandidateRequest) -> list[dict]:
        return [{"problem": n, "models": ["cpp", "python3", "java"]} for n in contest_names(request.codecontests)]

    def score_candidate(self, problem: str, code: str, request: CandidateRequest,
                        sandbox: "Sandbox") -> "tuple[ProbeScore, dict]":
        try:
            task = load_contest_problem(problem, request.codecontests, request.language)
        except (ContestError, FileNotFoundError, ValueError) as e:
            raise ScoreInputError(str(e)) from None
        return score_contest(sandbox, task, code, ContestSettings.from_probe(request.probe))


def rescale_baselines(prompts: list[EvalPrompt[ContestSpec]], calibration: dict) -> dict:
    """Baselines measured on another host are scaled by (this host's / the dataset's) calibration
    CPU time; on the same host they are used as stored. Returns what was done, for the report."""
    here, now = host_id(), calibration.get("reference_cpu_s")
    info = {"host": here, "calibration_cpu_s": now, "rescaled": []}
    for p in prompts:
        spec = p.spec
        if here in spec.hosts or not spec.hosts:
            continue
        if now and spec.calibration_cpu_s:
            spec.baseline_scale = now / spec.calibration_cpu_s
            info["rescaled"].append({"prompt_id": p.prompt_id, "scale": round(spec.baseline_scale, 4)})
    return info


# ---------------------------------------------------------------- one candidate (eval score)

class ContestError(ValueError):
    pass


def _median_submission(subs: list[dict], median: float) -> dict:
    """The measured submission whose runtime is closest to the language's median (the baseline)."""
    return min(subs, key=lambda s: abs(s["runtime_s"] - median))


def _source_root(source: str | Path | None) -> Path:
    return Path(source or bundled("codecontests_sample/data", "the contest source (a CodeContests-Perf folder)"))


def _is_perf_folder(root: Path) -> bool:
    try:
        return bool(dataset_files(root, "submissions"))
    except FileNotFoundError:
        return False


def contest_names(source: str | Path | None = None) -> list[str]:
    root = _source_root(source)
    if _is_perf_folder(root):
        return sorted({r["problem_id"] for r in read_rows(root, "problems", ("problem_id",))})
    from perfalign.perfdata.codecontests import iter_problems
    from perfalign.perfdata.records import ErrorRecord

    return sorted(p.problem_id for p in iter_problems(str(root)) if not isinstance(p, ErrorRecord))


def load_contest_problem(problem: str, source: str | Path | None = None, language: str = "cpp") -> ContestProblem:
    root = _source_root(source)
    lang = Language.parse(language).value
    if _is_perf_folder(root):
        probs = [r for r in read_rows(root, "problems", ("problem_id", "description", "time_limit_s",
                                                          "memory_limit_mb", "test_inputs", "test_outputs"))
                 if r["problem_id"] == problem]
        if not probs:
            raise ContestError(f"no problem {problem!r} in {root}")
        p = probs[0]
        subs = measured_by_problem(read_rows(root, "submissions", (*MEASURED_COLUMNS, "solution")))[problem][lang]
        if not subs:
            raise ContestError(f"{problem}: no measured correct {lang} submission in {root}: no baseline")
        middle = _median_submission(subs, language_medians({lang: subs})[lang])
        return ContestProblem(problem, [TestCase(i, o) for i, o in zip(p["test_inputs"], p["test_outputs"])],
                              Limits(time_s=float(p["time_limit_s"]), memory_mb=int(p["memory_limit_mb"])),
                              [(middle["solution"], middle["runtime_s"])], lang, str(root), p["description"])
    from perfalign.perfdata.codecontests import iter_problems
    from perfalign.perfdata.records import ErrorRecord

    for p in iter_problems(str(root)):
        if isinstance(p, ErrorRecord) or problem not in (p.problem_id, p.name):
            continue
        subs = [s for s in p.submissions if s.is_correct and s.language.value == lang]
        if not subs:
            raise ContestError(f"{problem}: no correct {lang} submission in {root}: no baseline")
        tests = list(p.tests)
        return ContestProblem(p.problem_id, tests, Limits(time_s=p.time_limit_s, memory_mb=p.memory_limit_mb),
                              [(s.solution, None) for s in subs], lang, str(root), p.description)
    raise ContestError(f"no problem {problem!r} in {root}")
