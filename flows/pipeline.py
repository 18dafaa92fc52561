"""Flow `pipeline`: the whole DAG on one machine. Today: CodeContests-Perf -> synthetic
pairs (Gemini when GEMINI_API_KEY is set, else the bundled sample); the alignment and
evaluation stages join as they land."""
from __future__ import annotations

import os
import time
from pathlib import Path

from .env import configure_prefect

configure_prefect()

from prefect import flow  # noqa: E402
from prefect.task_runners import ThreadPoolTaskRunner  # noqa: E402

from perfdata.synth import SynthConfig  # noqa: E402

from .perf import build_codecontests_perf  # noqa: E402
from .synth import generate_synthetic  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "codecontests_sample" / "data"


@flow(name="pipeline")
def pipeline(out: str = "runs/embedded", source: str = str(SAMPLE), repeats: int = 3, backend: str = "auto",
             workers: int | None = None, synth_n: int = 100) -> dict:
    t0 = time.monotonic()
    out_dir = Path(out)
    workers = workers or os.cpu_count() or 1
    stages: dict[str, dict] = {}
    perf = build_codecontests_perf.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))(
        source=source, out=str(out_dir / "codecontests_perf"), repeats=repeats, backend=backend,
        max_in_flight=2 * workers)
    stages["codecontests_perf"] = perf
    synth = SynthConfig(n=synth_n, backend="gemini", repeats=repeats, sandbox=backend, verify_workers=workers)
    stages["synthetic"] = generate_synthetic(synth, str(out_dir / "synthetic"))
    return {"out": str(out_dir), "stages": stages, "wall_seconds": round(time.monotonic() - t0, 1)}
