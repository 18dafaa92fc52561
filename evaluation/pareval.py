"""ParEval-style code generation tasks (paper §VI-A) from data/pareval_sample.

Each problem directory holds ``task.json`` (function, signature, description, example, the
execution models it has), ``baseline.cpp`` (the sequential baseline: the speedup reference and
the correctness reference), ``driver.cpp`` and optionally ``fast_<model>.cpp`` (a known faster
solution, used by the oracle). One prompt per (problem, execution model), in ParEval's form: a
commented function header the model completes, wrapped in the Listing 1 instruction.

Serial prompts are compiled without OpenMP and timed by CPU time; OpenMP prompts with
``-fopenmp`` and ``OMP_NUM_THREADS=omp_threads``, timed by wall time (CPU time sums threads).
The baseline of both is the sequential implementation. MPI prompts are listed but skipped: the
sandbox has no MPI launcher, and this host has no MPI implementation.
"""
from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox import Limits

from alignment.prompts import instruction_prompt

from .drivers import DriverSpec, read_task_dir
from .tasks import EvalPrompt, Skipped

if TYPE_CHECKING:
    from .config import EvalConfig

_INCLUDE = {"serial": "", "omp": "#include <omp.h>\n\n", "mpi": "#include <mpi.h>\n\n"}
_NOTE = {
    "serial": "",
    "omp": "Use OpenMP to compute in parallel.\n",
    "mpi": ("Use MPI to compute in parallel. Assume MPI has already been initialized.\n"
            "Every rank has a complete copy of the inputs. The result is used on rank 0.\n"),
}
_REQUIRED = ("function", "signature", "args", "description", "example", "execution_models")


def mpi_unavailable_reason() -> str:
    """Why MPI prompts cannot run here (always a reason: the sandbox cannot launch MPI jobs)."""
    if shutil.which("mpicxx") is None or shutil.which("mpirun") is None:
        return "no MPI implementation on this host (mpicxx/mpirun not found)"
    return "an MPI implementation is installed, but the sandbox has no MPI launcher (mpirun inside the sandbox)"


def pareval_header(meta: dict, model: str) -> str:
    """ParEval's prompt: includes, types, a comment with the task and an example, the open signature."""
    lines = (meta["description"].strip() + "\n" + _NOTE[model] + "Example:\n\n" + meta["example"].strip()).splitlines()
    rest = "\n".join(("   " + line) if line else "" for line in lines[1:])
    return f"{_INCLUDE[model]}{meta.get('preamble', '')}/* {lines[0]}\n{rest}\n*/\n{meta['signature']} {{"


def load_pareval_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    root = Path(config.pareval_dir)
    problems = sorted(p for p in root.iterdir() if (p / "task.json").is_file()) if root.is_dir() else []
    if not problems:
        raise FileNotFoundError(f"no ParEval tasks (*/task.json) under {root}")
    nonce = secrets.randbits(62)
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    for d in problems:
        meta = read_task_dir(d, _REQUIRED, ("baseline.cpp", "driver.cpp"))
        for model in meta["execution_models"]:
            if model not in config.pareval_models:
                continue
            task, prompt_id = f"pareval-{model}", f"{d.name}-{model}"
            if model == "mpi":
                skipped.append(Skipped(task, prompt_id, mpi_unavailable_reason()))
                continue
            spec = DriverSpec(
                task_id=prompt_id, function=meta["function"], signature=meta["signature"], args=meta["args"],
                baseline=(d / "baseline.cpp").read_text(), driver=(d / "driver.cpp").read_text(),
                preamble=meta.get("preamble", ""), openmp=model == "omp", threads=config.omp_threads,
                repeats=config.timing_repeats, timing="wall" if model == "omp" else "cpu",
                limits=Limits(time_s=config.task_time_limit_s, memory_mb=int(meta.get("memory_mb", 1024))),
                nonce=nonce, inout=meta.get("inout", {}))
            fast = d / f"fast_{model}.cpp"
            references = {"reference": spec.baseline, "slow": spec.slow_variant(),
                          "fast": fast.read_text() if fast.is_file() else spec.baseline}
            text = instruction_prompt(
                f"Complete the C++ function {meta['function']} below. Reply with the whole function.\n\n"
                f"```cpp\n{pareval_header(meta, model)}\n```", "cpp")
            prompts.append(EvalPrompt(task, prompt_id, text, "cpp", spec.timing, spec, references,
                                      {"reference": 1.0, "slow": 0.5, "fast": None if fast.is_file() else 1.0}))
    return prompts, skipped

