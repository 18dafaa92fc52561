"""Scoring by sandbox jobs: the path of the tasks whose samples are whole programs run by the
sandbox and read back (contest problems, the controlled task). A prompt's ``spec`` is a ``JobSpec``.

Identical programs of one prompt are run once. Serial programs share ``workers`` sandbox slots;
threaded (OpenMP) programs run one at a time afterwards, so their wall time is not inflated by
another of our programs on the same cores (their builds, untimed, run side by side first).
Each sample becomes a ``SampleResult`` with its
verdict, runtime, baseline and speedup (0 when incorrect; speedups through common.plausibility).
"""
from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass, field
from typing import Protocol

from perfalign.common.plausibility import speedup_ratio
from perfalign.common.progress import report as report_progress
from perfalign.sandbox import Job, RunResult, Sandbox
from perfalign.sandbox.clock import CONTRADICTED, count_contradicts_cpu

from .records import (
    BaselineResult,
    EvalPrompt,
    Responses,
    SampleResult,
    Scored,
    ScoreRun,
    extract_candidate,
    new_sample,
)

log = logging.getLogger("perfalign.evaluation")


@dataclass
class Measurement:
    """Outcome of one program: correct or not, its runtime (the task's clock), why not."""

    correct: bool
    runtime_s: float | None
    verdict: str
    message: str = ""
    times_s: list[float] = field(default_factory=list)  # every timed repeat (the chosen clock)
    # a deterministic clock: the native CPU time run beside the count, and its relative noise
    native_cpu_s: float | None = None
    native_noise: float = 0.0


class JobSpec(Protocol):
    """How one prompt's programs run as sandbox jobs and are read back."""

    parallel: bool                 # threaded: runs alone, after the serial programs
    baseline_source: str           # how the baseline is obtained, for the report

    def job(self, code: str, language: str) -> Job: ...

    def measure(self, result: RunResult) -> Measurement: ...

    def baseline_s(self, language: str) -> float | None:
        """The baseline of a sample in another language than the prompt's (not re-run)."""


def run_jobs(sandbox: Sandbox, jobs: list[Job], parallel: list[bool], workers: int,
             what: str = "evaluate: programs run") -> list[RunResult]:
    """Results in job order; SANDBOX_ERROR (an infrastructure fault) is retried by the sandbox
    (its ``retries``). Progress is reported as ``what`` (a bar in the terminal, lines in the run log)."""
    results: list[RunResult | None] = [None] * len(jobs)
    done = 0
    report_progress(what, done, len(jobs))
    for group, n in ((False, workers), (True, 1)):
        todo = [i for i in range(len(jobs)) if parallel[i] is group]
        if group and todo:  # threaded programs run alone; their builds need not: side by side first
            for j, res in sandbox.build_many([jobs[i] for i in todo], workers=workers):
                if res is not None and not res.verdict.retryable:  # final (a compile error): not run
                    results[todo[j]] = res
                    done += 1
                    report_progress(what, done, len(jobs))
            todo = [i for i in todo if results[i] is None]
        for j, res in sandbox.run_many([jobs[i] for i in todo], workers=n):
            results[todo[j]] = res
            done += 1
            report_progress(what, done, len(jobs))
    return results  # type: ignore[return-value]


def jobs_serial(prompts: list[EvalPrompt[JobSpec]]) -> bool:
    """EvalTask.serial of the tasks scored by sandbox jobs: no threaded program among them."""
    return not any(p.spec.parallel for p in prompts)


def score_jobs(prompts: list[EvalPrompt[JobSpec]], responses: Responses, run: ScoreRun) -> Scored:
    """Run all samples of all models plus the baselines; return per-sample results and the
    baseline of every prompt. Baselines are measured in this run, with the same job (repeats,
    clock) as a sample: the prompt's reference program (for a contest problem the
    dataset's median-runtime submission). With ``baseline_runs`` > 1 the
    extra runs go last (first and last in the group of programs) and the median counts."""
    cfg, sandbox = run.config, run.sandbox
    jobs: list[Job] = []
    parallel: list[bool] = []
    index: dict[tuple, int] = {}

    def add(key: tuple, job_factory, is_parallel: bool) -> int:
        if key not in index:
            index[key] = len(jobs)
            jobs.append(job_factory())
            parallel.append(is_parallel)
        return index[key]

    def baseline_job(p: EvalPrompt[JobSpec]) -> Job:
        return p.spec.job(p.references["reference"], p.language)

    for p in prompts:
        add(("baseline", p.prompt_id, 0), lambda p=p: baseline_job(p), p.spec.parallel)

    pending: list[tuple[SampleResult, int | None]] = []  # (result, index of its job)
    for model, per_prompt in responses.items():
        for p, answers in zip(prompts, per_prompt):
            for i, response in enumerate(answers):
                code, lang, how = extract_candidate(response, cfg.accept_unfenced)
                r = new_sample(model, p, i, code, how, lang)
                if code is None:
                    pending.append((r, None))
                    continue
                language = lang or p.language
                r.language = language
                key = ("sample", p.prompt_id, language, r.code_sha)
                pending.append((r, add(key, lambda c=code, p=p, lg=language: p.spec.job(c, lg), p.spec.parallel)))

    for n in range(1, cfg.baseline_runs):
        for p in prompts:
            add(("baseline", p.prompt_id, n), lambda p=p: baseline_job(p), p.spec.parallel)
    log.info("executing %d distinct programs (%d samples)", len(jobs), len(pending))
    what = f"evaluate: {prompts[0].task} programs run" if prompts else "evaluate: programs run"
    results = run_jobs(sandbox, jobs, parallel, sandbox.workers, what) if jobs else []

    baselines: dict[str, BaselineResult] = {}
    base_native: dict[str, tuple[float | None, float]] = {}
    by_id = {p.prompt_id: p for p in prompts}
    for p in prompts:
        runs = [p.spec.measure(results[index[("baseline", p.prompt_id, n)]]) for n in range(cfg.baseline_runs)]
        ok = [x.runtime_s for x in runs if x.correct]
        base_native[p.prompt_id] = next(((x.native_cpu_s, x.native_noise) for x in runs if x.correct), (None, 0.0))
        first = runs[0]
        baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, statistics.median(ok) if ok else None,
                                                first.verdict if not ok else "OK", p.spec.baseline_source,
                                                first.message[:500], first.times_s, [x.runtime_s for x in runs])

    def judge(r: SampleResult, p: EvalPrompt[JobSpec], result: RunResult) -> None:
        m = p.spec.measure(result)
        r.verdict, r.correct, r.runtime_s, r.message = m.verdict, m.correct, m.runtime_s, m.message[:500]
        r.times_s = m.times_s
        if (r.language or p.language) == p.language:
            r.baseline_s = baselines[p.prompt_id].runtime_s
        else:  # another language than the prompt's: the dataset's median for it (not re-run)
            r.baseline_s = p.spec.baseline_s(r.language)
            r.flags = ["baseline_from_dataset"]
        r.speedup = 0.0
        if r.correct and r.baseline_s:
            checked = speedup_ratio(r.baseline_s, r.runtime_s)
            r.speedup = checked.value if checked.value is not None else 0.0
            r.flags = sorted(set(r.flags) | set(checked.flags))
            base_cpu, base_noise = base_native.get(p.prompt_id, (None, 0.0))
            if base_cpu and m.native_cpu_s and count_contradicts_cpu(
                    r.speedup, base_cpu / m.native_cpu_s, base_noise + m.native_noise):
                r.flags = sorted(set(r.flags) | {CONTRADICTED})  # faster only under the count: no credit
                r.speedup = 0.0
                r.message = (f"the count says {checked.value:.2f}x, the CPU time beside it "
                             f"{base_cpu / m.native_cpu_s:.2f}x: not credited")
        elif r.correct:
            r.message = f"correct, but no {r.language} baseline: contributes no speedup"

    samples = []
    again: dict[int, list[SampleResult]] = {}
    for r, job_i in pending:
        p = by_id[r.prompt_id]
        if job_i is not None:
            judge(r, p, results[job_i])
            if "implausible" in r.flags:
                again.setdefault(job_i, []).append(r)
        samples.append(r)
    if again:  # an implausible speedup is measured once more; the flag stays if it still is
        order = sorted(again)
        for job_i, res in zip(order, run_jobs(sandbox, [jobs[i] for i in order], [parallel[i] for i in order],
                                              sandbox.workers, f"{what}: implausible speedups re-measured")):
            for r in again[job_i]:
                judge(r, by_id[r.prompt_id], res)
                r.flags = sorted(set(r.flags) | {"remeasured"})
    return Scored(samples, baselines)
