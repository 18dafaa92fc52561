"""Scoring by sandbox jobs: the path of the tasks whose samples are whole programs run by the
sandbox and read back (contest problems, the controlled task). A prompt's ``spec`` is a ``JobSpec``.

Two steps. Correctness: one run of every distinct program (identical programs of one prompt run
once), the prompts' baselines included, side by side on ``workers`` sandbox slots; threaded
(OpenMP) programs run one at a time afterwards, so their wall time is not inflated by another of
our programs on the same cores (their builds, untimed, run side by side first). Time: every
correct program beside its prompt's baseline by the contest protocol (``measure.contest.
paired_score``, the one that `eval score` uses: interleaved rounds in a secret random order,
adaptive, the hybrid paired estimate, implausible speedups re-measured), one pair per worker,
the two programs of a round back to back in it so they share the machine's state. A sample in
another language than the prompt's has no re-run baseline: its time is its correctness run's (the
median of ``repeats`` runs per test, as the dataset's label) against that language's dataset median.
Each sample becomes a ``SampleResult`` with its verdict, runtime, baseline and speedup (0 when
incorrect; speedups through common.plausibility).
"""
from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass, field, replace
from typing import Protocol

from perfalign.common.concurrency import bounded_map
from perfalign.common.plausibility import speedup_ratio
from perfalign.common.progress import report as report_progress
from perfalign.measure.contest import ContestSettings, paired_score
from perfalign.measure.harness import ProbeScore
from perfalign.sandbox import Job, RunResult, Sandbox

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
    """Outcome of one program's correctness run: correct or not, its runtime (the task's clock), why not."""

    correct: bool
    runtime_s: float | None
    verdict: str
    message: str = ""
    times_s: list[float] = field(default_factory=list)  # every timed test (the chosen clock)


class JobSpec(Protocol):
    """How one prompt's programs run as sandbox jobs and are read back."""

    parallel: bool                 # threaded: runs alone, after the serial programs
    baseline_source: str           # how the baseline is obtained, for the report

    def job(self, code: str, language: str, repeats: int = 1) -> Job: ...

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


def time_pairs(sandbox: Sandbox, pairs: list[tuple[Job, Job, bool]], settings: ContestSettings, workers: int,
               what: str) -> list[tuple[ProbeScore, dict]]:
    """``paired_score`` of each (baseline, candidate, threaded) in order, in the candidate job's
    clock: serial pairs on ``workers`` threads, each pair's rounds in one of them; threaded pairs
    one at a time after."""
    out: list[tuple[ProbeScore, dict] | None] = [None] * len(pairs)
    report_progress(what, 0, len(pairs))
    done = 0
    for group, n in ((False, workers), (True, 1)):
        todo = [i for i, (_, _, threaded) in enumerate(pairs) if threaded is group]
        for i, fut in bounded_map(lambda i: paired_score(sandbox, [pairs[i][0]], pairs[i][1],
                                                         replace(settings, clock=pairs[i][1].clock)), todo, n,
                                  name="pairs"):
            out[i] = fut.result()
            done += 1
            report_progress(what, done, len(pairs))
    return out  # type: ignore[return-value]


def jobs_serial(prompts: list[EvalPrompt[JobSpec]]) -> bool:
    """EvalTask.serial of the tasks scored by sandbox jobs: no threaded program among them."""
    return not any(p.spec.parallel for p in prompts)


def score_jobs(prompts: list[EvalPrompt[JobSpec]], responses: Responses, run: ScoreRun) -> Scored:
    """Run all samples of all models plus the baselines (module docstring); return per-sample
    results and the baseline of every prompt: its correctness run's verdict, and its time as
    re-run beside the prompt's samples (the median of every round; its correctness run where no
    sample was timed)."""
    cfg, sandbox = run.config, run.sandbox
    settings = ContestSettings.from_probe(cfg.probe)
    jobs: list[Job] = []
    parallel: list[bool] = []
    index: dict[tuple, int] = {}

    def add(key: tuple, job_factory, is_parallel: bool) -> int:
        if key not in index:
            index[key] = len(jobs)
            jobs.append(job_factory())
            parallel.append(is_parallel)
        return index[key]

    for p in prompts:
        add(("baseline", p.prompt_id), lambda p=p: p.spec.job(p.references["reference"], p.language), p.spec.parallel)

    pending: list[tuple[SampleResult, int | None]] = []  # (result, index of its job)
    for model, per_prompt in responses.items():
        for p, answers in zip(prompts, per_prompt):
            for i, response in enumerate(answers):
                code, lang, how = extract_candidate(response, cfg.accept_unfenced)
                r = new_sample(model, p, i, code, how, lang)
                if code is None:
                    pending.append((r, None))
                    continue
                language = r.language = lang or p.language
                reps = 1 if language == p.language else settings.repeats  # no re-run baseline: its runs are its time
                key = ("sample", p.prompt_id, language, r.code_sha)
                pending.append((r, add(key, lambda c=code, p=p, lg=language, n=reps: p.spec.job(c, lg, n),
                                       p.spec.parallel)))

    log.info("executing %d distinct programs (%d samples)", len(jobs), len(pending))
    what = f"evaluate: {prompts[0].task} programs run" if prompts else "evaluate: programs run"
    results = run_jobs(sandbox, jobs, parallel, sandbox.workers, what) if jobs else []
    by_id = {p.prompt_id: p for p in prompts}
    prompt_of = {i: key[1] for key, i in index.items()}
    checked = {i: by_id[prompt_of[i]].spec.measure(res) for i, res in enumerate(results)}

    # the time of every correct program in its prompt's language, beside the prompt's (correct) baseline
    timed = [i for key, i in index.items() if key[0] == "sample" and checked[i].correct
             and key[2] == by_id[key[1]].language and checked[index[("baseline", key[1])]].correct]
    pair_jobs = [(jobs[index[("baseline", prompt_of[i])]], jobs[i], parallel[i]) for i in timed]
    log.info("timing %d programs beside their baselines", len(timed))
    paired = dict(zip(timed, time_pairs(sandbox, pair_jobs, settings, sandbox.workers,
                                        what.replace("programs run", "pairs timed")))) if timed else {}

    baselines = {p.prompt_id: _baseline(p, checked[index[("baseline", p.prompt_id)]],
                                        [paired[i][1] for i in timed if prompt_of[i] == p.prompt_id])
                 for p in prompts}
    samples, again = [], {}
    for r, job_i in pending:
        if job_i in paired:
            _from_pair(r, checked[job_i], *paired[job_i])
        elif job_i is not None:
            _from_run(r, by_id[r.prompt_id], checked[job_i], baselines[r.prompt_id].runtime_s)
            if "implausible" in r.flags:
                again.setdefault(job_i, []).append(r)
        samples.append(r)
    if again:  # against a dataset median: an implausible speedup is run once more; the flag stays if it still is
        order = sorted(again)
        for job_i, res in zip(order, run_jobs(sandbox, [jobs[i] for i in order], [parallel[i] for i in order],
                                              sandbox.workers, f"{what}: implausible speedups re-measured")):
            for r in again[job_i]:
                _from_run(r, by_id[r.prompt_id], by_id[r.prompt_id].spec.measure(res), None)
                r.flags = sorted(set(r.flags) | {"remeasured"})
    return Scored(samples, baselines)


def _baseline(p: EvalPrompt[JobSpec], run: Measurement, pairs: list[dict]) -> BaselineResult:
    """The prompt's baseline: its correctness run's verdict; its time the median of every round it
    ran in beside the samples (its correctness run's where none was timed)."""
    rounds = [x for info in pairs for x in info.get("baseline_runs", [])]
    ok = [x for x in rounds if x is not None]
    runtime = statistics.median(ok) if ok else run.runtime_s if run.correct else None
    return BaselineResult(p.prompt_id, p.task, p.timing, runtime, run.verdict, p.spec.baseline_source,
                          run.message[:500], run.times_s, rounds)


def _from_pair(r: SampleResult, run: Measurement, score: ProbeScore, info: dict) -> None:
    """A sample timed beside its baseline: the contest protocol's score."""
    r.verdict, r.correct, r.runtime_s, r.baseline_s = score.verdict, score.correct, score.runtime_s, score.baseline_s
    r.speedup = (score.speedup or 0.0) if score.correct else 0.0
    r.flags, r.message = list(score.flags), score.message[:500]
    r.round_speedups, r.rel_se = score.round_speedups, score.rel_se
    r.times_s = [x for x in info.get("runtimes", []) if x is not None] or run.times_s


def _from_run(r: SampleResult, p: EvalPrompt[JobSpec], run: Measurement, baseline_s: float | None) -> None:
    """A sample judged by its correctness run alone: incorrect, without a baseline, or in another
    language than the prompt's (that language's dataset median, not re-run)."""
    r.verdict, r.correct, r.runtime_s, r.message, r.times_s = run.verdict, run.correct, run.runtime_s, \
        run.message[:500], run.times_s
    r.speedup = 0.0
    if r.language != p.language:
        baseline_s = p.spec.baseline_s(r.language)
        r.flags = ["baseline_from_dataset"]
    r.baseline_s = baseline_s
    if r.correct and baseline_s and r.language != p.language:
        checked = speedup_ratio(baseline_s, r.runtime_s)
        r.speedup = checked.value if checked.value is not None else 0.0
        r.flags = sorted(set(r.flags) | set(checked.flags))
    elif r.correct:
        r.message = f"correct, but no {r.language} baseline: contributes no speedup"
