"""Flow `generate_synthetic`: thin Prefect wiring around perfdata.synth (which owns request
concurrency, rate limits, caching and sandbox verification)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from .env import configure_prefect

configure_prefect()

from prefect import flow, task  # noqa: E402

from perfdata.synth import SynthConfig, generate_synthetic as _generate  # noqa: E402

# Set by the CLI for its progress bar (not a flow parameter Prefect could store).
_progress_hook: Callable | None = None


@task(task_run_name="generate and verify {config.n} pairs ({config.backend})")
def generate_and_verify(config: SynthConfig, out: str) -> dict:
    return _generate(config, Path(out), progress=_progress_hook).to_dict()


@flow(name="generate_synthetic")
def generate_synthetic(config: SynthConfig, out: str) -> dict:
    return generate_and_verify(config, out)


def run_synth(config: SynthConfig, out: str, progress: Callable | None = None) -> dict:
    global _progress_hook
    _progress_hook = progress
    try:
        return generate_synthetic(config, out)
    finally:
        _progress_hook = None
