"""Flow `build_codecontests_perf`: thin Prefect wiring around perfdata.perf (perf_plan, perf_batch).

Coarse tasks (a batch of submissions each: Prefect costs ~100 ms per task), progress in the
Prefect UI (a progress artifact) and in the CLI. No task retries: a SANDBOX_ERROR is retried by
the sandbox (``Sandbox.run_many(retries=)``) and then recorded as a reject, and a batch that
fails for any other reason stays missing until the next run.
"""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import as_completed
from prefect.states import Failed
from prefect.task_runners import ThreadPoolTaskRunner

from perfalign.common.progress import report
from perfalign.config.tables import PerfSettings  # a flow parameter: Prefect resolves its type
from perfalign.perfdata.codecontests import SourceUnreadable
from perfalign.perfdata.perf import Batch, BatchReport, BuildPlan, BuildSettings
from perfalign.perfdata.perf_batch import run_batch
from perfalign.perfdata.perf_build import finalize
from perfalign.perfdata.perf_plan import plan_build
from perfalign.perfdata.summary import error_lines, summarize
from perfalign.sandbox import SandboxSettings
from perfalign.sandbox.clock import ClockMismatch

from .env import route_library_logs
from .summaries import artifact_key, flow_run_name, publish_stage, run_label

route_library_logs()

PROGRESS = "CodeContests-Perf: submissions measured"


@task(task_run_name="measure {batch.problem_id} ({batch.shard_id})")
def measure_batch(batch: Batch, settings: BuildSettings, out_dir: str, sandbox: SandboxSettings) -> BatchReport:
    return run_batch(batch, settings, Path(out_dir), sandbox)


@flow(name="build_codecontests_perf", log_prints=True, flow_run_name=flow_run_name("codecontests_perf"))
def build_codecontests_perf(out: str, settings: PerfSettings, sandbox: SandboxSettings = SandboxSettings(),
                            max_in_flight: int = 8, remeasure_rejects: bool = False) -> dict:
    """Run every correct submission of ``settings.source`` on all its tests; write Parquet to
    ``out``. ``remeasure_rejects``: measure timing-caused rejects of earlier runs again. A source
    file that cannot be read fails the run with its name and reason (a Failed state, no traceback;
    calling the flow raises prefect's FailedRun with that line), unless ``settings.allow_partial``:
    the build then goes on without it and every summary says so. ``settings.clock``: what measures
    the labels (sandbox.clock: cpu, instructions or cycles); every row carries it in its ``clock``
    column and an output folder measured with another clock is refused (sandbox.clock.ClockMismatch).
    ``settings.limit_cap``: a correct-labelled program past its problem's time limit runs up to this
    multiple of it and is labelled (``past_limit``); past the cap it is a `time` reject.
    ``sandbox``: the [sandbox] settings each batch's sandbox opens with."""
    t0 = time.monotonic()
    source, build = settings.source, settings.build_settings()
    plan = BuildPlan(Path(out), build)
    artifact = create_progress_artifact(progress=0.0, description=PROGRESS,
                                        key=artifact_key(run_label(out), "codecontests_perf", "progress"))
    done, failed, in_flight = 0, [], []

    def collect(n: int) -> None:
        """Wait for ``n`` in-flight batches (whichever finish first)."""
        nonlocal done
        for i, fut in enumerate(as_completed(list(in_flight))):
            if i >= n:
                break
            try:
                rep = fut.result()
                done += sum(rep.counts.values())
            except Exception as e:  # the batch stays missing: a rerun picks it up
                failed.append(str(e))
            in_flight.remove(fut)
            pct = 100.0 * done / max(plan.pending, 1)
            update_progress_artifact(artifact, progress=min(pct, 100.0))
            report(PROGRESS, done, plan.pending)

    try:
        for batch in plan_build(source, Path(out), build, settings.limit_problems, plan, remeasure_rejects,
                                settings.allow_partial):
            in_flight.append(measure_batch.submit(batch, build, str(out), sandbox))
            report(PROGRESS, done, plan.pending)
            if len(in_flight) >= max_in_flight:
                collect(1)
        collect(len(in_flight))
        for msg in plan.quarantined:
            print(msg)
        finalize(Path(out), source, build)
    except (SourceUnreadable, ClockMismatch) as e:
        collect(len(in_flight))  # what was measured is kept: a rerun resumes
        return Failed(message=str(e))
    finally:
        plan.release()
    summary = _summary(out, plan, t0, failed)
    for line in error_lines(summary["error_reasons"], summary["unreadable_files"]):
        print(f"malformed source records: {line}")  # the run log says what the card says
    update_progress_artifact(artifact, progress=100.0)
    publish_stage(run_label(out), "codecontests_perf", summary, summary["wall_seconds"])
    return summary


def _summary(out: str, plan: BuildPlan, t0: float, failed: list[str]) -> dict:
    summary = summarize(Path(out)).to_dict()
    summary.update(wall_seconds=round(time.monotonic() - t0, 2), failed_batches=len(failed),
                   failures=failed[:20], resumed_skipped=plan.skipped_done, malformed_rows=plan.errors,
                   quarantined=plan.quarantined, remeasured_rejects=plan.remeasuring)
    return summary


def already_built(out: str, settings: PerfSettings, remeasure_rejects: bool = False) -> dict | None:
    """The build's summary when ``out`` holds every submission measured with these settings (no
    batch to run), else None. Such a rerun needs no flow and no Prefect server: its start-up would
    be most of its time."""
    t0 = time.monotonic()
    build = settings.build_settings()
    plan = BuildPlan(Path(out), build)
    try:
        with contextlib.closing(plan_build(settings.source, Path(out), build, settings.limit_problems, plan,
                                           remeasure_rejects, settings.allow_partial)) as batches:
            if next(batches, None) is not None:  # (streams the source up to the first submission to measure)
                return None
        finalize(Path(out), settings.source, build)
    finally:
        plan.release()
    return _summary(out, plan, t0, [])


def run_build(out: str, settings: PerfSettings, sandbox: SandboxSettings = SandboxSettings(),
              workers: int | None = None, dask_address: str | None = None, remeasure_rejects: bool = False) -> dict:
    """Pick the task runner (threads locally, one worker per core; Dask when given an
    address) and run the flow, at most two batches per worker in flight."""
    if dask_address:
        from perfalign.common.extras import require

        runner = require("prefect_dask", "dask").DaskTaskRunner(address=dask_address)
        workers = workers or 8
    else:
        workers = workers or os.cpu_count() or 1
        runner = ThreadPoolTaskRunner(max_workers=workers)
    return build_codecontests_perf.with_options(task_runner=runner)(
        out=out, settings=settings, sandbox=sandbox, max_in_flight=2 * workers, remeasure_rejects=remeasure_rejects)
