"""PolyBench-style code optimization tasks (paper §VI-B) from data/polybench_sample.

Each kernel directory holds ``task.json`` (function, signature, in-out arrays), ``kernel.cpp``
(the original kernel: what the model is asked to optimize, the correctness reference and the
speedup baseline), ``driver.cpp`` and optionally ``fast.cpp`` (a known faster version, used by
the oracle). The prompt is the optimization variant of Listing 1 with the kernel's source.

Candidates are serial by default (CPU time); with ``polybench_openmp`` they are compiled with
``-fopenmp`` and timed by wall time.
"""
from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from perfalign.sandbox import Limits

from perfalign.common.prompts import optimization_prompt

from .drivers import DriverSpec, read_task_dir
from .tasks import EvalPrompt, Skipped

if TYPE_CHECKING:
    from .config import EvalConfig

_REQUIRED = ("kernel", "function", "signature", "args", "description")


def is_polybench_checkout(path: str | Path) -> bool:
    return (Path(path) / "utilities" / "polybench.h").is_file()


def load_checkout_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """PolyBench/C 4.2.1's 30 kernels from a checkout (polybench_suite.py), run by the probe harness."""
    from .polybench_suite import PolyBenchCheckout

    co = PolyBenchCheckout(config.polybench_dir)
    model = "omp" if config.polybench_openmp else "serial"
    prompts = []
    for name in co.names():
        p = co.problem(name, config.profile_name, model, threads=config.omp_threads)
        problem = (f"PolyBench/C kernel {name} ({p.sizes['T']}). Keep the signature of {p.signature.name}; the "
                   "arrays it dumps must stay the same (relative difference at most 1e-6).")
        prompts.append(EvalPrompt("polybench", name, optimization_prompt(problem, "cpp", p.prompt), "cpp", p.clock, p,
                                  {"reference": p.reference, "slow": p.slow, "fast": p.reference},
                                  {"reference": 1.0, "slow": None, "fast": 1.0}))
    return prompts, []


def load_polybench_prompts(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    if is_polybench_checkout(config.polybench_dir):
        return load_checkout_prompts(config)
    root = Path(config.polybench_dir)
    kernels = sorted(p for p in root.iterdir() if (p / "task.json").is_file()) if root.is_dir() else []
    if not kernels:
        raise FileNotFoundError(f"no PolyBench kernels (*/task.json) under {root}")
    nonce = secrets.randbits(62)
    prompts: list[EvalPrompt] = []
    for d in kernels:
        meta = read_task_dir(d, _REQUIRED, ("kernel.cpp", "driver.cpp"))
        kernel = (d / "kernel.cpp").read_text()
        spec = DriverSpec(
            task_id=meta["kernel"], function=meta["function"], signature=meta["signature"], args=meta["args"],
            baseline=kernel, driver=(d / "driver.cpp").read_text(), preamble=meta.get("preamble", ""),
            openmp=config.polybench_openmp, threads=config.omp_threads, repeats=config.timing_repeats,
            timing="wall" if config.polybench_openmp else "cpu",
            limits=Limits(time_s=config.task_time_limit_s, memory_mb=int(meta.get("memory_mb", 1024))),
            nonce=nonce, inout=meta.get("inout", {}))
        fast = d / "fast.cpp"
        problem = (f"PolyBench kernel {meta['kernel']}: {meta['description']}\n"
                   f"Keep the signature `{meta['signature']}`; the results must stay the same "
                   f"(relative difference at most 1e-6).")
        prompts.append(EvalPrompt(
            "polybench", meta["kernel"], optimization_prompt(problem, "cpp", kernel), "cpp", spec.timing, spec,
            {"reference": kernel, "slow": spec.slow_variant(), "fast": fast.read_text() if fast.is_file() else kernel},
            {"reference": 1.0, "slow": 0.5, "fast": None if fast.is_file() else 1.0}))
    return prompts, []

