"""Run every generated sample (and every driver baseline) through the sandbox worker pool.

Identical programs of one prompt are run once. Serial programs share ``workers`` sandbox slots;
threaded (OpenMP) programs run one at a time afterwards, so their wall time is not inflated by
another of our programs on the same cores. Each sample becomes a ``SampleResult`` with its
verdict, runtime, baseline and speedup (0 when incorrect, see metrics.sample_speedup).
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field

from sandbox import Job, RunResult, Sandbox, Verdict

from alignment.prompts import extract_code

from .drivers import DriverSpec
from .metrics import sample_speedup
from .tasks import EvalPrompt

log = logging.getLogger("perfalign.evaluation")
SANDBOX_RETRIES = 2


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


def extract_candidate(response: str, accept_unfenced: bool = True) -> tuple[str | None, str | None, str]:
    """(code, fence language, how) of a response: its first ``` block, else (optionally) the
    whole response, else nothing."""
    code, lang = extract_code(response)
    if code is not None:
        return code, lang, "fence"
    if accept_unfenced and response.strip():
        return response.strip("\n"), None, "raw"
    return None, None, "none"


def run_jobs(sandbox: Sandbox, jobs: list[Job], parallel: list[bool], workers: int) -> list[RunResult]:
    """Results in job order; SANDBOX_ERROR (an infrastructure fault) is retried."""
    results: list[RunResult | None] = [None] * len(jobs)
    for group, n in ((False, workers), (True, 1)):
        todo = [i for i in range(len(jobs)) if parallel[i] is group]
        for _attempt in range(SANDBOX_RETRIES + 1):
            if not todo:
                break
            for j, res in sandbox.run_many([jobs[i] for i in todo], workers=n):
                results[todo[j]] = res
            todo = [i for i in todo if results[i].verdict is Verdict.SANDBOX_ERROR]
    return results  # type: ignore[return-value]


def execute(prompts: list[EvalPrompt], generations: dict[str, list[list[str]]], sandbox: Sandbox, workers: int,
            accept_unfenced: bool = True,
            baseline_runs: int = 2) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """Run all samples of all models plus the driver baselines; return per-sample results and
    the baseline of every prompt. A driver baseline runs ``baseline_runs`` times, first and
    last in its group of programs; its runtime is the lowest per-run runtime, so one run
    slowed by another tenant does not inflate every speedup of the prompt (conservative:
    it can only lower speedups)."""
    jobs: list[Job] = []
    parallel: list[bool] = []
    index: dict[tuple, int] = {}

    def add(key: tuple, job_factory, is_parallel: bool) -> int:
        if key not in index:
            index[key] = len(jobs)
            jobs.append(job_factory())
            parallel.append(is_parallel)
        return index[key]

    drivers = [p for p in prompts if isinstance(p.runner, DriverSpec)]
    for p in drivers:
        add(("baseline", p.prompt_id, 0), lambda p=p: p.runner.job(p.runner.baseline, "cpp"), p.parallel)

    pending: list[tuple[SampleResult, int | None]] = []  # (result, index of its job)
    for model, per_prompt in generations.items():
        for p, responses in zip(prompts, per_prompt):
            for i, response in enumerate(responses):
                code, lang, how = extract_candidate(response, accept_unfenced)
                r = SampleResult(model, p.task, p.prompt_id, i, how, lang, "", False, None, None, 0.0,
                                 hashlib.sha256(code.encode()).hexdigest()[:16] if code else None)
                if code is None:
                    r.verdict, r.message = "NO_CODE", "the response holds no code"
                    pending.append((r, None))
                    continue
                language = lang or p.language
                if isinstance(p.runner, DriverSpec) and language != "cpp":
                    r.verdict, r.message = "WRONG_LANGUAGE", f"asked for C++, got {language}"
                    pending.append((r, None))
                    continue
                r.language = language
                key = ("sample", p.prompt_id, language, r.code_sha)
                pending.append((r, add(key, lambda c=code, p=p, lg=language: p.runner.job(c, lg), p.parallel)))

    for run in range(1, baseline_runs):
        for p in drivers:
            add(("baseline", p.prompt_id, run), lambda p=p: p.runner.job(p.runner.baseline, "cpp"), p.parallel)
    log.info("executing %d distinct programs (%d samples)", len(jobs), len(pending))
    results = run_jobs(sandbox, jobs, parallel, workers) if jobs else []

    baselines: dict[str, BaselineResult] = {}
    by_id = {p.prompt_id: p for p in prompts}
    for p in prompts:
        if isinstance(p.runner, DriverSpec):
            runs = [p.runner.measure(results[index[("baseline", p.prompt_id, r)]])
                    for r in range(baseline_runs)]
            ok = [x for x in runs if x.correct]
            best = min(ok, key=lambda x: x.runtime_s) if ok else runs[0]
            baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, best.runtime_s if ok else None,
                                                    best.verdict, "measured", best.message[:500], best.times_s,
                                                    [x.runtime_s for x in runs])
        else:
            baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, p.runner.baseline_s(p.language),
                                                    "OK", "dataset")

    samples = []
    for r, job_i in pending:
        p = by_id[r.prompt_id]
        if job_i is not None:
            m = p.runner.measure(results[job_i])
            r.verdict, r.correct, r.runtime_s, r.message = m.verdict, m.correct, m.runtime_s, m.message[:500]
            r.times_s = m.times_s
        r.baseline_s = baselines[p.prompt_id].runtime_s if isinstance(p.runner, DriverSpec) else \
            p.runner.baseline_s(r.language or p.language)
        if r.correct and r.baseline_s:
            r.speedup = sample_speedup(True, r.baseline_s, r.runtime_s)
        elif r.correct:
            r.message = f"correct, but no {r.language} baseline: contributes no speedup"
        samples.append(r)
    return samples, baselines

