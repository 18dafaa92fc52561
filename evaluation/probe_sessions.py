"""Scoring by probe sessions: the path of ParEval and PolyBench, from a user's checkout or the
bundled samples, whose prompts' ``spec`` is a ``measure.probe.ProbeProblem``. One probe session per
prompt: every distinct sample of every model scored beside the suite's reference, one program at
a time (threaded and MPI programs need the machine); serial problems' sessions run side by side."""
from __future__ import annotations

import logging

from perfalign.common.concurrency import bounded_map
from perfalign.common.progress import report as report_progress
from perfalign.measure.harness import ProbeScore, ProbeSession, ProbeSettings, ProblemUnusable, score_problem
from perfalign.measure.probe import ProbeProblem

from .records import (
    BaselineResult,
    CandidateRequest,
    EvalPrompt,
    Responses,
    SampleResult,
    Scored,
    ScoreRun,
    extract_candidate,
    new_sample,
)

log = logging.getLogger("perfalign.evaluation")


def score_probes(prompts: list[EvalPrompt[ProbeProblem]], responses: Responses, run: ScoreRun) -> Scored:
    """One probe session per prompt. Serial problems (CPU time, one thread) run ``workers`` sessions
    side by side, as sandbox jobs do; threaded and MPI problems (wall time) one at a time, alone."""
    settings = run.config.probe
    results: dict[int, tuple[list[SampleResult], BaselineResult]] = {}
    alone = [i for i, p in enumerate(prompts) if _alone(p)]
    side_by_side = sorted(set(range(len(prompts))) - set(alone))

    def one(pi: int) -> tuple[list[SampleResult], BaselineResult]:
        return _score_prompt(pi, prompts[pi], responses, run, settings)

    what = f"evaluate: {prompts[0].task.split('-')[0]} problems scored" if prompts else "evaluate: problems scored"

    for pi, fut in bounded_map(one, side_by_side, run.sandbox.workers, name="probe"):
        results[pi] = fut.result()
        report_progress(what, len(results), len(prompts))
    for pi in alone:
        results[pi] = one(pi)
        report_progress(what, len(results), len(prompts))
    samples = [r for pi in range(len(prompts)) for r in results[pi][0]]
    return Scored(samples, {prompts[pi].prompt_id: results[pi][1] for pi in range(len(prompts))})


def _alone(p: EvalPrompt[ProbeProblem]) -> bool:
    return p.spec.threads > 1 or p.spec.clock != "cpu"  # threaded, MPI: wall time, the machine to itself


def probes_serial(prompts: list[EvalPrompt[ProbeProblem]]) -> bool:
    """EvalTask.serial of the probe tasks: every session a serial one."""
    return not any(_alone(p) for p in prompts)


def _score_prompt(pi: int, p: EvalPrompt[ProbeProblem], responses: Responses, run: ScoreRun,
                  settings: ProbeSettings) -> tuple[list[SampleResult], BaselineResult]:
    """Every model's samples of one prompt in one probe session, beside the suite's reference."""
    pending: list[SampleResult] = []
    codes: dict[str, str] = {}
    for model, per_prompt in responses.items():
        for i, response in enumerate(per_prompt[pi]):
            code, lang, how = extract_candidate(response, run.config.accept_unfenced)
            r = new_sample(model, p, i, code, how, lang)
            if code is not None and (lang or "cpp") != "cpp":
                r.verdict, r.message = "WRONG_LANGUAGE", f"asked for C++, got {lang}"
            elif code is not None:
                r.language = "cpp"
                codes[r.code_sha] = code
            pending.append(r)
    session = ProbeSession(run.sandbox, p.spec, settings)
    try:
        scores: dict[str, ProbeScore] = session.score(codes) if codes else {}
        session.prepare()
        base = next((sc.baseline_s for sc in scores.values() if sc.baseline_s is not None),
                    session.info.get("reference_call_s"))
        if not session.measurable:  # no speedup can be measured: the prompt is excluded, with why
            baseline = BaselineResult(p.prompt_id, p.task, p.timing, None, "UNMEASURABLE", "measured",
                                      session.unmeasurable_why)
        else:
            baseline = BaselineResult(p.prompt_id, p.task, p.timing, base, "OK", "measured",
                                      f"probe: {session.info.get('calls')} calls per run")
    except ProblemUnusable as e:
        log.warning("%s", e)
        scores = {}
        baseline = BaselineResult(p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured", str(e)[:500])
    for r in pending:
        sc = scores.get(r.code_sha) if r.language else None
        if sc is not None:
            r.verdict, r.correct, r.runtime_s, r.baseline_s = sc.verdict, sc.verdict == "OK", sc.runtime_s, \
                sc.baseline_s
            # a correct sample too noisy for a speedup of its own (flag unmeasurable) enters Eq. 10
            # with its capped estimate: a mean over samples averages that noise, a 0 would not
            r.speedup = sc.estimate() or 0.0
            r.message, r.flags, r.round_speedups = sc.message[:500], list(sc.flags), list(sc.round_speedups)
            r.rel_se = sc.rel_se
            if sc.inprocess_runtime_s and sc.inprocess_baseline_s:
                r.inprocess_speedup = round(sc.inprocess_baseline_s / sc.inprocess_runtime_s, 4)
        elif r.language and not r.verdict:
            r.verdict, r.message = "EXCLUDED", baseline.message
    return pending, baseline


def score_probe_candidate(problem: ProbeProblem, code: str, request: CandidateRequest,
                          sandbox) -> tuple[ProbeScore, dict]:
    """One candidate through the probe harness (`perfalign eval score`), its baseline in the same
    session; raises ProblemUnusable when the suite's own reference cannot run here."""
    scores, info = score_problem(sandbox, problem, {"candidate": code}, request.probe)
    return scores["candidate"], info
