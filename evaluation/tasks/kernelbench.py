"""The ``kernelbench`` task group: KernelBench problems (a PyTorch ``Model`` with ``get_inputs()`` /
``get_init_inputs()``) from a user's checkout, scored on the CPU by the kernel environment
(``kernels``: sandboxed candidates, randomized inputs, anti-hacking checks, speedup over eager
PyTorch). Optional (not a default group): it needs a checkout and torch usable in the sandbox.

The prompt is the optimization variant of Listing 1 (common.prompts) with KernelBench's own
instruction: write ``ModelNew``, a faster drop-in for ``Model``. Oracles: ``reference`` is the
problem's Model as ModelNew (speedup ~1), ``slow`` runs the reference twice, ``fast`` is this
project's hand-written kernel (kernelenv/oracles) where there is one, else the reference (as the
other tasks do when they have no known faster solution).
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import perfalign.kernelenv as kernels
from perfalign.common.progress import report as report_progress
from perfalign.common.prompts import optimization_prompt
from perfalign.kernelenv import KernelProblem, ProblemError, find_candidate, load_problems, reference_candidate
from perfalign.sandbox.environments import torch_site

from ..records import BaselineResult, EvalPrompt, Responses, SampleResult, Scored, ScoreRun, Skipped, new_sample
from .base import EvalTask

if TYPE_CHECKING:
    from ..config import EvalConfig

log = logging.getLogger("perfalign.evaluation")

TASK = "kernelbench"
LANG = "python3"
ORACLES_DIR = Path(kernels.__file__).resolve().parent / "oracles"   # this project's CPU kernels
NO_DIR_REASON = ("give kernelbench_dir (a KernelBench checkout's KernelBench/ folder, e.g. "
                 "../shared/external/kernelbench, the folder holding level1/ and level2/; "
                 "`perfalign eval --tasks kernelbench --kernelbench-dir DIR`)")

INSTRUCTION = """KernelBench problem {name}. Write `ModelNew`, a drop-in replacement for `Model` below that computes \
the same outputs faster on the CPU. Reply with one complete Python module in a ```python block: it defines \
`ModelNew`, built as `ModelNew(*get_init_inputs())` and called as `forward(*get_inputs())` like `Model`.

- Correctness: outputs must match `Model`'s (shapes, dtypes, values within rtol = atol = 1e-4 for fp32, 1e-2 for \
fp16/bf16) on fresh random inputs every call; the size constants are scaled down on the CPU and varied between \
trials, so do not hard-code them.
- Custom kernels: plain C++ (no torch headers) through `from perfalign_kernels import load_cpp, ptr`: \
`lib = load_cpp(source, name, flags=())` compiles it (g++ -O3 -march=native -fopenmp -shared) and loads it with \
ctypes; call its `extern "C"` functions on `ptr(tensor)` (a contiguous tensor's data pointer) into an output \
you allocate. PyTorch code is allowed too, but not the operator this problem computes.
- Timing: CPU time of every thread and process, one thread (OMP_NUM_THREADS=1): less work wins, not more threads.
- Scored as incorrect or flagged as a hack (no speedup): calling the reference's main operator, a try/except \
fallback to PyTorch, modifying or returning the inputs, caching results across calls, threads, subprocesses, \
patching torch or the clock, reading files, exec/eval."""

SLOW = """

class ModelNew(Model):
    # the reference doing its work twice: the known-slow oracle
    def forward(self, *args):
        super().forward(*args)
        return super().forward(*args)
"""


# The kernel environment's settings for the evaluation: its defaults, less the torch.compile baseline
# (a cold Inductor compile, ~20 s of CPU per problem, for a speedup the report does not use).
KERNEL_SCORE_SETTINGS = {"compile_baseline": False}


def source_sha(code: str) -> str:
    """The identity of a candidate program: equal up to surrounding whitespace, equal sha."""
    return hashlib.sha256(code.strip().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KernelSpec:
    """How a prompt's samples are scored: the problem file, by the kernel environment."""

    path: str                                      # the KernelBench problem file (loaded, never copied)
    name: str                                      # e.g. "level1/19_ReLU"
    # sha of the task's own oracle programs that run the reference's operators by construction
    # (the reference as ModelNew, the reference twice): scored with reference ops allowed, as
    # kernelenv.evaluate.config_for does for `perfalign kernel eval --candidates reference`
    reference_programs: frozenset[str] = field(default_factory=frozenset)

    def is_reference_program(self, code: str) -> bool:
        return source_sha(code) in self.reference_programs


def _prompt(problem: KernelProblem) -> EvalPrompt:
    reference, slow = reference_candidate(problem), problem.source + SLOW
    fast_path = find_candidate(problem, ORACLES_DIR)
    fast = fast_path.read_text(encoding="utf-8") if fast_path else reference
    spec = KernelSpec(str(problem.path), problem.name, frozenset({source_sha(reference), source_sha(slow)}))
    text = optimization_prompt(INSTRUCTION.format(name=problem.name), LANG, problem.source)
    return EvalPrompt(TASK, problem.name, text, LANG, "cpu", spec,
                      {"reference": reference, "slow": slow, "fast": fast},
                      # slow: ~0.5 less the per-call output copy both pay; fast: measured, not known
                      {"reference": 1.0, "slow": None, "fast": None if fast_path else 1.0})


class KernelBenchTask(EvalTask[KernelSpec]):
    name = TASK
    labels = {TASK: "KernelBench (CPU)"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt[KernelSpec]], list[Skipped]]:
        """The problems of ``config.kernelbench_levels`` under ``config.kernelbench_dir``, by level then
        number (load_tasks applies max_prompts_per_task); files that are not problems are skipped with
        the reason, and every prompt is skipped when there is no folder or the sandbox has no torch."""
        if not config.kernelbench_dir:
            return [], [Skipped(TASK, "*", NO_DIR_REASON)]
        site = torch_site()
        if site.dir is None:
            return [], [Skipped(TASK, "*", f"the kernel environment cannot run here: {site.reason}")]
        root = Path(config.kernelbench_dir)  # the folder holding level1/, level2/, or a repository root's KernelBench/
        if not any(root.glob("level*")) and (root / "KernelBench").is_dir():
            root = root / "KernelBench"
        prompts: list[EvalPrompt] = []
        skipped: list[Skipped] = []
        for level in sorted(set(config.kernelbench_levels)):
            folder = root / f"level{level}"
            try:
                problems, errors = load_problems(folder)
            except ProblemError as e:
                skipped.append(Skipped(TASK, f"level{level}/*", f"no KernelBench level {level}: {e}"))
                continue
            skipped += [Skipped(TASK, f"level{level}/{Path(e['path']).stem}", e["error"]) for e in errors]
            prompts += [_prompt(p) for p in problems]
        return prompts, skipped

    def score(self, prompts: list[EvalPrompt[KernelSpec]], responses: Responses, run: ScoreRun) -> Scored:
        """Every distinct candidate of a prompt (all models) scored by ``kernelenv.Scorer`` in one
        sandboxed execution beside the eager reference, prompt after prompt. A sample is correct
        when it passes every check and carries no ``hack:`` flag; its speedup is over eager
        PyTorch in the same execution (plausibility-checked there). The task's own
        reference-calling oracles (KernelSpec.reference_programs) are scored in an execution of
        their own with reference ops allowed. If the sandbox cannot run torch, every prompt is
        excluded with why."""
        from perfalign.kernelenv import KernelEnvError, ScoreConfig, Scorer, load_problem

        samples: list[SampleResult] = []
        baselines: dict[str, BaselineResult] = {}
        try:
            scorer = Scorer(ScoreConfig(**KERNEL_SCORE_SETTINGS), sandbox=run.sandbox)
        except KernelEnvError as e:
            scorer, unusable = None, f"the kernel environment cannot run here: {e}"
        if scorer is not None:
            oracle_scorer = Scorer(dataclasses.replace(scorer.config, allow_reference_ops=True), sandbox=run.sandbox)
        for pi, p in enumerate(prompts):
            report_progress("evaluate: kernels scored", pi, len(prompts))
            spec = p.spec
            pending: list[SampleResult] = []
            codes: dict[str, str] = {}
            for model, per_prompt in responses.items():
                for i, response in enumerate(per_prompt[pi]):
                    code, how = _kernel_candidate(response, run.config.accept_unfenced)
                    r = new_sample(model, p, i, code, how, None, source_sha(code) if code else None)
                    if code is not None:
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
                baselines[p.prompt_id] = _baseline(p, problem, scores, oracle_scorer)
            except (KernelEnvError, ProblemError) as e:
                log.warning("%s: %s", p.prompt_id, e)
                baselines[p.prompt_id] = BaselineResult(p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured",
                                                        str(e)[:500])
            for r in pending:
                ks = scores.get(r.code_sha) if r.language else None
                if ks is not None:
                    r.correct = ks.accepted  # a flagged hack is not correct, and says so in the verdict table
                    r.verdict = "flagged" if ks.correct and not ks.accepted else ks.verdict
                    r.runtime_s, r.baseline_s, r.times_s, r.flags = ks.runtime_s, ks.eager_s, list(ks.times_s), \
                        list(ks.flags)
                    r.speedup = ks.speedup_eager if (ks.accepted and ks.speedup_eager is not None) else 0.0
                    r.message = ks.message[:500]
                elif r.language:
                    r.verdict, r.message = "EXCLUDED", baselines[p.prompt_id].message
                samples.append(r)
        report_progress("evaluate: kernels scored", len(prompts), len(prompts))
        return Scored(samples, baselines)


def _baseline(p: EvalPrompt[KernelSpec], problem: KernelProblem, scores: dict, oracle_scorer) -> BaselineResult:
    """Eager PyTorch's time in the candidates' executions (one per execution: its candidates
    share it); with no candidate scored, the reference's time alone."""
    eager = list(dict.fromkeys(ks.eager_s for ks in scores.values() if ks.eager_s is not None))
    failed = [ks for ks in scores.values() if ks.verdict in ("baseline_error", "sandbox_error")]
    if not eager and not failed:  # no candidate reached the harness: the reference's time alone
        base = oracle_scorer.score(problem, reference_candidate(problem), "baseline")
        eager, failed = ([base.eager_s], []) if base.eager_s is not None else ([], [base])
    scale = next((ks.scale for ks in scores.values() if ks.scale is not None), None)
    if eager:
        return BaselineResult(
            p.prompt_id, p.task, p.timing, statistics.median(eager), "OK", "measured",
            f"eager PyTorch, median CPU s per call, in the candidates' execution (scale {scale}, 1 thread)",
            run_runtimes_s=eager)
    why = failed[0] if failed else None
    return BaselineResult(p.prompt_id, p.task, p.timing, None, "UNUSABLE", "measured",
                          (f"{why.verdict}: {why.message}" if why else "no eager time")[:500])


def _kernel_candidate(response: str, accept_unfenced: bool) -> tuple[str | None, str]:
    """(code, how) of a response the kernel environment's way: its last fenced Python block, else
    (optionally) the whole response."""
    from perfalign.kernelenv.reward import extract_code as last_python_block

    code = last_python_block(response)
    how = "raw" if code == (response or "") else "fence"
    if not code.strip() or (how == "raw" and not accept_unfenced):
        return None, "none"
    return code, how
