"""Building CodeContests-Perf in one process (``build``: plan, then every batch measured, for
library users and tests; the flow `build_codecontests_perf` does the same through Prefect tasks)
and its dataset card (``finalize``)."""
from __future__ import annotations

import shutil
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path

from perfalign.common.concurrency import bounded_map
from perfalign.sandbox import Sandbox, SandboxSettings

from .dataset_card import write_dataset_card
from .perf import SPOOL, TABLES, BuildPlan, BuildSettings
from .perf_batch import run_batch
from .perf_plan import plan_build
from .schema import card_schema
from .summary import BuildSummary, describe_source, split_globs, summarize, summary_markdown


def finalize(out_dir: Path, source: str, settings: BuildSettings) -> Path:
    """Write the dataset card. Only tables with rows get a config, and only splits with rows a
    split: `datasets` cannot load an empty split, so an absent `rejects` / `errors` config means
    that table is empty."""
    out_dir = Path(out_dir)
    desc = {
        "submissions": "Every submission with its label, sandbox verdict and measured CPU times.",
        "problems": "Problems with tests and limits.",
        "rejects": "Submissions labelled correct that failed here, with the cause "
                   "(the paper omits them; kept traceable).",
        "errors": "Malformed source rows, with the reason (nothing is silently dropped).",
    }
    tables = {t: {"data_files": split_globs(out_dir, t), "description": desc[t], "schema": card_schema(t)}
              for t in TABLES if split_globs(out_dir, t)}
    if not tables:
        raise ValueError(f"{out_dir}: nothing was built (no problems in the source?)")
    shutil.rmtree(out_dir / SPOOL, ignore_errors=True)  # every batch has run by now
    return write_dataset_card(
        out_dir, title="CodeContests-Perf",
        description=("Runtimes of CodeContests submissions measured in an isolated sandbox "
                     "(perfalign; paper: Performance-Aligned LLMs for Generating Fast Code, §IV-A). "
                     f"Source: {describe_source(source, out_dir)}. Settings: repeats={settings.repeats}, "
                     f"time_limit_factor={settings.time_limit_factor}, max_tests={settings.max_tests}. "
                     "`runtime_s` is the mean over tests of the median CPU time (user+sys) of the program.\n\n"
                     "The splits are CodeContests' own: `load_dataset(<this dataset>, split=\"test\")` gives the "
                     "submissions of the test problems (held out for evaluation); each row also has a `split` column."),
        tables=tables,
        extra_markdown=summary_markdown(summarize(out_dir)),
    )


def build(source: str, out_dir: Path, settings: BuildSettings, limit_problems: int | None = None,
          workers: int = 1, remeasure_rejects: bool = False, allow_partial: bool = False,
          sandbox: SandboxSettings = SandboxSettings()) -> BuildSummary:
    """Single-process build (no Prefect): for library users and tests. The flow
    `build_codecontests_perf` does the same through Prefect tasks."""
    t0 = time.monotonic()
    plan = BuildPlan(Path(out_dir), settings)
    try:
        with Sandbox.from_settings(sandbox, workers=workers) as sb:
            batches = plan_build(source, out_dir, settings, limit_problems, plan, remeasure_rejects, allow_partial)
            # bounded in flight: the plan streams, never all in memory; closed before the sandbox
            with closing(bounded_map(lambda b: run_batch(b, settings, out_dir, sb), batches, workers)) as done:
                for _, fut in done:
                    fut.result()
        finalize(out_dir, source, settings)
    finally:
        plan.release()
    return replace(summarize(out_dir), quarantined=plan.quarantined, wall_seconds=round(time.monotonic() - t0, 2))
