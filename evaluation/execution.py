"""Run every generated sample (and every driver baseline) through the sandbox worker pool.

Identical programs of one prompt are run once. Serial programs share ``workers`` sandbox slots;
threaded (OpenMP) programs run one at a time afterwards, so their wall time is not inflated by
another of our programs on the same cores. Each sample becomes a ``SampleResult`` with its
verdict, runtime, baseline and speedup (0 when incorrect; speedups through common.plausibility).
"""
from __future__ import annotations

import hashlib
import logging
import statistics
from dataclasses import asdict, dataclass, field

from perfalign.sandbox import Job, RunResult, Sandbox, Verdict
from perfalign.common.plausibility import speedup_ratio
from perfalign.common.progress import report as report_progress

from perfalign.common.prompts import extract_code

from .drivers import DriverSpec
from perfalign.measure.harness import ProbeScore, ProbeSession, ProbeSettings, ProblemUnusable
from .kernelspec import KernelSpec, source_sha
from perfalign.measure.probe import ProbeProblem
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
    flags: list[str] = field(default_factory=list)      # the harness's: implausible, capped, over budget...
    inprocess_speedup: float | None = None              # diagnostic (probe tasks): the driver's own clock
    round_speedups: list[float] = field(default_factory=list)  # probe tasks: one per timed round

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
            accept_unfenced: bool = True, baseline_runs: int = 1,
            probe_settings: ProbeSettings | None = None) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """Probe tasks (the real suites) go through the probe harness, one session per prompt;
    KernelBench prompts through the kernel environment; the others (contests, bundled samples)
    through the driver path below."""
    probe = [p for p in prompts if isinstance(p.runner, ProbeProblem)]
    kernel = [p for p in prompts if isinstance(p.runner, KernelSpec)]
    other = [p for p in prompts if not isinstance(p.runner, (ProbeProblem, KernelSpec))]
    samples, baselines = [], {}
    if kernel:
        idx = {id(p): i for i, p in enumerate(prompts)}
        gens = {m: [per[idx[id(p)]] for p in kernel] for m, per in generations.items()}
        s, b = execute_kernels(kernel, gens, sandbox, accept_unfenced)
        samples += s
        baselines.update(b)
    if probe:
        idx = {id(p): i for i, p in enumerate(prompts)}
        gens = {m: [per[idx[id(p)]] for p in probe] for m, per in generations.items()}
        s, b = execute_probe(probe, gens, sandbox, accept_unfenced, probe_settings or ProbeSettings())
        samples += s
        baselines.update(b)
    if other:
        idx = {id(p): i for i, p in enumerate(prompts)}
        gens = {m: [per[idx[id(p)]] for p in other] for m, per in generations.items()}
        s, b = _execute_drivers(other, gens, sandbox, workers, accept_unfenced, baseline_runs)
        samples += s
        baselines.update(b)
    return samples, baselines


def execute_probe(prompts: list[EvalPrompt], generations: dict[str, list[list[str]]], sandbox: Sandbox,
                  accept_unfenced: bool, settings: ProbeSettings) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """One probe session per prompt: every distinct sample of every model scored beside the
    suite's reference, one program at a time (threaded and MPI programs need the machine)."""
    samples: list[SampleResult] = []
    baselines: dict[str, BaselineResult] = {}
    for pi, p in enumerate(prompts):
        report_progress("evaluate: suite problems scored", pi, len(prompts))
        pending: list[SampleResult] = []
        codes: dict[str, str] = {}
        for model, per_prompt in generations.items():
            for i, response in enumerate(per_prompt[pi]):
                code, lang, how = extract_candidate(response, accept_unfenced)
                sha = hashlib.sha256(code.encode()).hexdigest()[:16] if code else None
                r = SampleResult(model, p.task, p.prompt_id, i, how, lang, "", False, None, None, 0.0, sha)
                if code is None:
                    r.verdict, r.message = "NO_CODE", "the response holds no code"
                elif (lang or "cpp") != "cpp":
                    r.verdict, r.message = "WRONG_LANGUAGE", f"asked for C++, got {lang}"
                else:
                    r.language = "cpp"
                    codes[sha] = code
                pending.append(r)
        session = ProbeSession(sandbox, p.runner, settings)
        try:
            scores: dict[str, ProbeScore] = session.score(codes) if codes else {}
            session.prepare()
            base = next((sc.baseline_s for sc in scores.values() if sc.baseline_s is not None),
                        session.info.get("reference_call_s"))
            if not session.measurable:  # no speedup can be measured: the prompt is excluded, with why
                baselines[p.prompt_id] = BaselineResult(
                    p.prompt_id, p.task, p.timing, None, "UNMEASURABLE", "measured",
                    session.unmeasurable_why)
            else:
                baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, base, "OK", "measured",
                                                        f"probe: {session.info.get('calls')} calls per run")
        except ProblemUnusable as e:
            log.warning("%s", e)
            scores = {}
            baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured",
                                                    str(e)[:500])
        for r in pending:
            sc = scores.get(r.code_sha) if r.language else None
            if sc is not None:
                r.verdict, r.correct, r.runtime_s, r.baseline_s = sc.verdict, sc.verdict == "OK", sc.runtime_s, \
                    sc.baseline_s
                # a correct sample too noisy for a speedup of its own (flag unmeasurable) enters Eq. 10
                # with its capped estimate: a mean over samples averages that noise, a 0 would not
                r.speedup = sc.estimate() or 0.0
                r.message, r.flags, r.round_speedups = sc.message[:500], list(sc.flags), list(sc.round_speedups)
                if sc.inprocess_runtime_s and sc.inprocess_baseline_s:
                    r.inprocess_speedup = round(sc.inprocess_baseline_s / sc.inprocess_runtime_s, 4)
            elif r.language and not r.verdict:
                r.verdict, r.message = "EXCLUDED", baselines[p.prompt_id].message
            samples.append(r)
    return samples, baselines


# The kernel environment's settings for the evaluation: its defaults, less the torch.compile baseline
# (a cold Inductor compile, ~20 s of CPU per problem, for a speedup the report does not use).
KERNEL_SCORE_SETTINGS = {"compile_baseline": False}


def _kernel_candidate(response: str, accept_unfenced: bool) -> tuple[str | None, str]:
    """(code, how) of a response the kernel environment's way: its last fenced Python block, else
    (optionally) the whole response."""
    from perfalign.kernelenv.reward import extract_code as last_python_block

    code = last_python_block(response)
    how = "raw" if code == (response or "") else "fence"
    if not code.strip() or (how == "raw" and not accept_unfenced):
        return None, "none"
    return code, how


def execute_kernels(prompts: list[EvalPrompt], generations: dict[str, list[list[str]]], sandbox: Sandbox,
                    accept_unfenced: bool = True) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """Every distinct candidate of a KernelBench prompt (all models) scored by ``kernels.Scorer``
    in one sandboxed execution beside the eager reference, prompt after prompt. A sample is
    correct when it passes every check and carries no ``hack:`` flag; its speedup is over eager
    PyTorch in the same execution (plausibility-checked there). The task's own reference-calling
    oracles (KernelSpec.reference_programs) are scored in an execution of their own with
    reference ops allowed. If the sandbox cannot run torch, every prompt is excluded with why."""
    import dataclasses

    from perfalign.kernelenv import KernelEnvError, ProblemError, ScoreConfig, Scorer, load_problem, reference_candidate

    samples: list[SampleResult] = []
    baselines: dict[str, BaselineResult] = {}
    try:
        scorer = Scorer(ScoreConfig(**KERNEL_SCORE_SETTINGS), sandbox=sandbox)
    except KernelEnvError as e:
        scorer, unusable = None, f"the kernel environment cannot run here: {e}"
    if scorer is not None:
        oracle_scorer = Scorer(dataclasses.replace(scorer.config, allow_reference_ops=True), sandbox=sandbox)
    for pi, p in enumerate(prompts):
        report_progress("evaluate: kernels scored", pi, len(prompts))
        spec: KernelSpec = p.runner
        pending: list[SampleResult] = []
        codes: dict[str, str] = {}
        for model, per_prompt in generations.items():
            for i, response in enumerate(per_prompt[pi]):
                code, how = _kernel_candidate(response, accept_unfenced)
                r = SampleResult(model, p.task, p.prompt_id, i, how, None, "", False, None, None, 0.0,
                                 source_sha(code) if code else None)
                if code is None:
                    r.verdict, r.message = "NO_CODE", "the response holds no code"
                else:
                    r.language = p.language
                    codes[r.code_sha] = code
                pending.append(r)
        scores: dict = {}
        try:
            if scorer is None:
                raise KernelEnvError(unusable)
            problem = load_problem(spec.path)
            own = [(sha, c) for sha, c in codes.items() if spec.is_reference_program(c)]
            rest = [(sha, c) for sha, c in codes.items() if not spec.is_reference_program(c)]
            for group, by in ((rest, scorer), (own, oracle_scorer)):
                if group:
                    scores.update({ks.candidate: ks for ks in by.score_many(problem, group)})
            # one eager time per sandboxed execution (its candidates share it)
            eager = list(dict.fromkeys(ks.eager_s for ks in scores.values() if ks.eager_s is not None))
            failed = [ks for ks in scores.values() if ks.verdict in ("baseline_error", "sandbox_error")]
            if not eager and not failed:  # no candidate reached the harness: the reference's time alone
                base = oracle_scorer.score(problem, reference_candidate(problem), "baseline")
                eager, failed = ([base.eager_s], []) if base.eager_s is not None else ([], [base])
            scale = next((ks.scale for ks in scores.values() if ks.scale is not None), None)
            if eager:
                baselines[p.prompt_id] = BaselineResult(
                    p.prompt_id, p.task, p.timing, statistics.median(eager), "OK", "measured",
                    f"eager PyTorch, median CPU s per call, in the candidates' execution (scale {scale}, 1 thread)",
                    run_runtimes_s=eager)
            else:
                why = failed[0] if failed else None
                baselines[p.prompt_id] = BaselineResult(
                    p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured",
                    (f"{why.verdict}: {why.message}" if why else "no eager time")[:500])
        except (KernelEnvError, ProblemError) as e:
            log.warning("%s: %s", p.prompt_id, e)
            baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured",
                                                    str(e)[:500])
        for r in pending:
            ks = scores.get(r.code_sha) if r.language else None
            if ks is not None:
                r.correct = ks.accepted  # a flagged hack is not correct, and says so in the verdict table
                r.verdict = "flagged" if ks.correct and not ks.accepted else ks.verdict
                r.runtime_s, r.baseline_s, r.times_s, r.flags = ks.runtime_s, ks.eager_s, list(ks.times_s), list(ks.flags)
                r.speedup = ks.speedup_eager if (ks.accepted and ks.speedup_eager is not None) else 0.0
                r.message = ks.message[:500]
            elif r.language:
                r.verdict, r.message = "EXCLUDED", baselines[p.prompt_id].message
            samples.append(r)
    report_progress("evaluate: kernels scored", len(prompts), len(prompts))
    return samples, baselines


def _execute_drivers(prompts: list[EvalPrompt], generations: dict[str, list[list[str]]], sandbox: Sandbox,
                     workers: int, accept_unfenced: bool = True,
                     baseline_runs: int = 1) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """Run all samples of all models plus the baselines; return per-sample results and the
    baseline of every prompt. Baselines are measured in this run, with the same job (repeats,
    clock) as a sample: the driver's baseline implementation, or for a contest problem the
    dataset's median-runtime submission re-run. With ``baseline_runs`` > 1 the extra runs go
    last (first and last in the group of programs) and the median counts."""
    jobs: list[Job] = []
    parallel: list[bool] = []
    index: dict[tuple, int] = {}

    def add(key: tuple, job_factory, is_parallel: bool) -> int:
        if key not in index:
            index[key] = len(jobs)
            jobs.append(job_factory())
            parallel.append(is_parallel)
        return index[key]

    def baseline_job(p: EvalPrompt) -> Job:
        if isinstance(p.runner, DriverSpec):
            return p.runner.job(p.runner.baseline, "cpp")
        return p.runner.job(p.references["reference"], p.language)  # the median submission

    for p in prompts:
        add(("baseline", p.prompt_id, 0), lambda p=p: baseline_job(p), p.parallel)

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
        for p in prompts:
            add(("baseline", p.prompt_id, run), lambda p=p: baseline_job(p), p.parallel)
    log.info("executing %d distinct programs (%d samples)", len(jobs), len(pending))
    results = run_jobs(sandbox, jobs, parallel, workers) if jobs else []

    baselines: dict[str, BaselineResult] = {}
    by_id = {p.prompt_id: p for p in prompts}
    for p in prompts:
        runs = [p.runner.measure(results[index[("baseline", p.prompt_id, r)]]) for r in range(baseline_runs)]
        ok = [x.runtime_s for x in runs if x.correct]
        first = runs[0]
        source = "measured" if isinstance(p.runner, DriverSpec) else "measured (median submission re-run)"
        baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, statistics.median(ok) if ok else None,
                                                first.verdict if not ok else "OK", source, first.message[:500],
                                                first.times_s, [x.runtime_s for x in runs])

    def judge(r: SampleResult, p: EvalPrompt, result: RunResult) -> None:
        m = p.runner.measure(result)
        r.verdict, r.correct, r.runtime_s, r.message = m.verdict, m.correct, m.runtime_s, m.message[:500]
        r.times_s = m.times_s
        if isinstance(p.runner, DriverSpec) or (r.language or p.language) == p.language:
            r.baseline_s = baselines[p.prompt_id].runtime_s
        else:  # another language than the prompt's: the dataset's median for it (not re-run)
            r.baseline_s = p.runner.baseline_s(r.language)
            r.flags = ["baseline_from_dataset"]
        r.speedup = 0.0
        if r.correct and r.baseline_s:
            checked = speedup_ratio(r.baseline_s, r.runtime_s)
            r.speedup = checked.value if checked.value is not None else 0.0
            r.flags = sorted(set(r.flags) | set(checked.flags))
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
        for job_i, res in zip(order, run_jobs(sandbox, [jobs[i] for i in order], [parallel[i] for i in order], workers)):
            for r in again[job_i]:
                judge(r, by_id[r.prompt_id], res)
                r.flags = sorted(set(r.flags) | {"remeasured"})
    return samples, baselines
