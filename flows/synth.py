"""Flow `generate_synthetic`: thin Prefect wiring around perfdata.synth (which owns request
concurrency, rate limits, caching and sandbox verification)."""
from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, task

from perfalign.perfdata.synth import SynthConfig
from perfalign.perfdata.synth import generate_synthetic as _generate
from perfalign.sandbox import SandboxSettings

from .env import route_library_logs
from .summaries import flow_run_name, publish_stage, run_label

route_library_logs()


@task(task_run_name="generate and verify {config.n} pairs ({config.backend})")
def generate_and_verify(config: SynthConfig, out: str, sandbox: SandboxSettings) -> dict:
    return _generate(config, Path(out), sandbox=sandbox).to_dict()  # progress: common.progress


@flow(name="generate_synthetic", flow_run_name=flow_run_name("synthetic"))
def generate_synthetic(config: SynthConfig, out: str, sandbox: SandboxSettings = SandboxSettings()) -> dict:
    t0 = time.monotonic()
    summary = generate_and_verify(config, out, sandbox)
    publish_stage(run_label(out), "synthetic", summary, time.monotonic() - t0)
    return summary
