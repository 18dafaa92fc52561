"""ParEval-style code generation tasks (paper §VI-A) from data/pareval_sample.

Each problem directory holds ``task.json`` (function, signature, description, example, the
execution models it has), ``baseline.cpp`` (the sequential baseline: the speedup reference and
the correctness reference), ``driver.cpp`` and optionally ``fast_<model>.cpp`` (a known faster
solution, used by the oracle). One prompt per (problem, execution model), in ParEval's form: a
commented function header the model completes, wrapped in the Listing 1 instruction.

Serial prompts are compiled without OpenMP and timed by CPU time; OpenMP prompts with
``-fopenmp`` and ``OMP_NUM_THREADS=omp_threads``, timed by wall time (CPU time sums threads).
The baseline of both is the sequential implementation. MPI prompts of the bundled sample are
listed but skipped (its drivers have no MPI harness).

``pareval_dir`` may instead be a ParEval checkout: its own 60 problems in serial, OpenMP and MPI
are then loaded by pareval_suite.py and scored by the probe harness (harness.py).
"""
from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from perfalign.sandbox import Limits

from perfalign.common.prompts import instruction_prompt

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
    """Why the bundled sample's MPI prompts are skipped."""
    if shutil.which("mpicxx") is None or shutil.which("mpirun") is None:
        return "no MPI implementation on this host (mpicxx/mpirun not found)"
    return ("the bundled sample's drivers have no MPI harness: give --pareval-dir (a ParEval checkout) for "
            "ParEval's MPI problems")


def pareval_header(meta: dict, model: str) -> str:
    """ParEval's prompt: includes, types, a comment with the task and an example, the open signature."""
    lines = (meta["description"].strip() + "\n" + _NOTE[model] + "Example:\n\n" + meta["example"].strip()).splitlines()
    rest = "\n".join(("   " + line) if line else "" for line in lines[1:])
    return f"{_INCLUDE[model]}{meta.get('preamble', '')}/* {lines[0]}\n{rest}\n*/\n{meta['signature']} {{"


def is_pareval_checkout(path: str | Path) -> bool:
    return (Path(path) / "prompts" / "generation-prompts.json").is_file()


def load_checkout_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """ParEval's own problems from a checkout (pareval_suite.py), run by the probe harness."""
    from .pareval_suite import ParEvalCheckout

    co = ParEvalCheckout(config.pareval_dir)
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    mpi_missing = shutil.which("mpicxx") is None or shutil.which("mpirun") is None
    for name in co.names():
        for model in config.pareval_models:
            task, prompt_id = f"pareval-{model}", f"{name}-{model}"
            if (name, model) not in co.prompts:
                continue
            if model == "mpi" and mpi_missing:
                skipped.append(Skipped(task, prompt_id, "no MPI implementation on this host (mpicxx/mpirun not "
                                                        "found; scripts/setup.sh installs Open MPI)"))
                continue
            p = co.problem(name, model, config.profile_name, threads=config.omp_threads, ranks=config.mpi_ranks)
            text = instruction_prompt(f"Complete the C++ function {p.signature.name} below. Reply with the whole "
                                      f"function.\n\n```cpp\n{p.prompt}\n```", "cpp")
            prompts.append(EvalPrompt(task, prompt_id, text, "cpp", p.clock, p,
                                      {"reference": p.reference, "slow": p.slow, "fast": p.reference},
                                      {"reference": 1.0, "slow": None, "fast": 1.0}))
    return prompts, skipped


def load_pareval_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    if is_pareval_checkout(config.pareval_dir):
        return load_checkout_prompts(config)
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

