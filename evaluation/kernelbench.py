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

from pathlib import Path
from typing import TYPE_CHECKING

import perfalign.kernelenv as kernels
from perfalign.common.prompts import optimization_prompt
from perfalign.kernelenv import Problem, ProblemError, find_candidate, load_problems, reference_candidate
from perfalign.sandbox.environments import torch_site

from .kernelspec import KernelSpec, source_sha
from .tasks import EvalPrompt, Skipped

if TYPE_CHECKING:
    from .config import EvalConfig

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


def kernelbench_root(path: str | Path) -> Path:
    """The folder holding level1/, level2/: the one given, or its KernelBench/ (a repository root)."""
    root = Path(path)
    if not any(root.glob("level*")) and (root / "KernelBench").is_dir():
        return root / "KernelBench"
    return root


def prompt_text(problem: Problem) -> str:
    return optimization_prompt(INSTRUCTION.format(name=problem.name), LANG, problem.source)


def _prompt(problem: Problem) -> EvalPrompt:
    reference, slow = reference_candidate(problem), problem.source + SLOW
    fast_path = find_candidate(problem, ORACLES_DIR)
    fast = fast_path.read_text(encoding="utf-8") if fast_path else reference
    spec = KernelSpec(str(problem.path), problem.name, frozenset({source_sha(reference), source_sha(slow)}))
    return EvalPrompt(TASK, problem.name, prompt_text(problem), LANG, "cpu", spec,
                      {"reference": reference, "slow": slow, "fast": fast},
                      # slow: ~0.5 less the per-call output copy both pay; fast: measured, not known
                      {"reference": 1.0, "slow": None, "fast": None if fast_path else 1.0})


def load_kernel_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """The problems of ``config.kernelbench_levels`` under ``config.kernelbench_dir``, by level then
    number (load_tasks applies max_prompts_per_task); files that are not problems are skipped with
    the reason, and every prompt is skipped when there is no folder or the sandbox has no torch."""
    if not config.kernelbench_dir:
        return [], [Skipped(TASK, "*", NO_DIR_REASON)]
    site = torch_site()
    if site.dir is None:
        return [], [Skipped(TASK, "*", f"the kernel environment cannot run here: {site.reason}")]
    root = kernelbench_root(config.kernelbench_dir)
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
