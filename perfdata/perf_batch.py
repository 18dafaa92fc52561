"""Measuring a CodeContests-Perf batch: every submission of it run in the sandbox under the
capped limits, and its rows committed (rejects shard, then submissions shard)."""
from __future__ import annotations

import collections
import os
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from perfalign.sandbox import Job, Limits, RunResult, Sandbox, SandboxSettings, Verdict
from perfalign.sandbox.clock import DETERMINISTIC, scaled_limits

from . import shards
from .perf import Batch, BatchReport, BuildSettings, base_row, reject_cause, solution_columns
from .records import SpooledTests, Submission
from .schema import arrow_schema


def _run_all(sb: Sandbox, jobs: list[Job]) -> list[RunResult]:
    # workers=1: a batch is one unit of work; parallelism comes from batches in flight. A job
    # still in SANDBOX_ERROR after the sandbox's retries is a reject with cause ``sandbox_error``.
    done = sorted(sb.run_many(jobs, workers=1), key=lambda r: r[0])
    return [res for _, res in done]


def run_batch(batch: Batch, settings: BuildSettings, out_dir: Path,
              sandbox: Sandbox | SandboxSettings = SandboxSettings()) -> BatchReport:
    """Measure a batch and commit it (rejects shard, then submissions shard).

    Programs run under the cap (``limit_cap`` x the problem's limit): one past the limit is
    labelled with its runtime and flagged ``past_limit``. One that fails only on time (past the
    cap) is measured once more before it is rejected (a loaded machine must not turn it into a
    TLE); its row says so."""
    own = isinstance(sandbox, SandboxSettings)
    sb = Sandbox.from_settings(sandbox, workers=1) if own else sandbox
    capped = replace(batch.limits, time_s=round(batch.limits.time_s * settings.limit_cap, 3))
    try:
        jobs = [Job(sub.solution, sub.language, batch.tests, capped, settings.repeats, stop_on_failure=True,
                    clock=settings.clock)
                for sub in batch.submissions]
        results = _run_all(sb, jobs)
        again = [i for i, r in enumerate(results) if r.verdict is Verdict.TIME_LIMIT_EXCEEDED]
        for i, res in zip(again, _run_all(sb, [jobs[i] for i in again]) if again else []):
            results[i] = res
    finally:
        if own:
            sb.close()
        if isinstance(batch.tests, SpooledTests):
            batch.tests.remove()
            with suppress(OSError):  # the problem's spool folder goes with its last batch
                os.rmdir(Path(batch.tests.directory).parent)
    remeasured = set(again)
    sub_rows, rej_rows = [], []
    previous = batch.previous or [None] * len(batch.submissions)
    for i, (sub, key, res) in enumerate(zip(batch.submissions, batch.keys, results)):
        row = _measured_row(sub, batch.split, key, settings, res, batch.limits)
        row.update(remeasured=i in remeasured or previous[i] is not None, previous_cause=previous[i])
        sub_rows.append(row)
        if row["status"] == "rejected":
            rej_rows.append(_reject_row(sub, batch.split, key, settings, res, i in remeasured, batch.limits))
    split = shards.clean_split(batch.split)
    shards.write_shard(out_dir, "rejects", batch.shard_id, rej_rows, arrow_schema("rejects"), split)
    shards.write_shard(out_dir, "submissions", batch.shard_id, sub_rows, arrow_schema("submissions"), split)
    return BatchReport(batch.shard_id, dict(collections.Counter(r["status"] for r in sub_rows)))


def past_limit(res: RunResult, limits: Limits) -> bool:
    """Whether a run of a test used more CPU time than the problem's limit allows here (the limit
    a build without the cap enforces; under a deterministic clock, scaled for valgrind)."""
    lim = scaled_limits(limits, res.clock) if res.clock in DETERMINISTIC else limits
    return any(c is not None and c > lim.time_s for t in res.tests for c in t.cpu_times_s)


def _measured_row(sub: Submission, split: str, key: str, settings: BuildSettings, res: RunResult,
                  limits: Limits) -> dict:
    row = base_row(sub, split, key, settings)
    ok = res.verdict is Verdict.OK
    status = "measured" if ok else ("unsupported" if res.verdict is Verdict.UNSUPPORTED_LANGUAGE else "rejected")
    row.update({
        "status": status,
        "verdict": res.verdict.value,
        "reject_cause": reject_cause(res.verdict) if status == "rejected" else None,
        "runtime_s": res.mean_cpu_time_s if ok else None,
        "past_limit": past_limit(res, limits) if ok else None,
        "limit_cap": settings.limit_cap,
        "test_cpu_times_s": [t.cpu_time_s for t in res.tests],
        "test_cpu_repeats_s": [t.cpu_times_s for t in res.tests],
        "test_wall_times_s": [t.wall_time_s for t in res.tests],
        "test_max_rss_kb": [t.max_rss_kb for t in res.tests],
        "test_verdicts": [t.verdict.value for t in res.tests],
        "clock": res.clock,  # the clock that really measured it (a fallback says cpu)
        "test_clock_counts": None if res.clock == "cpu" else [
            t.cycles if res.clock == "cycles" else t.instructions for t in res.tests],
        "test_native_cpu_repeats_s": None if res.clock == "cpu" else [t.native_cpu_times_s for t in res.tests],
        "compile_ok": res.compile.ok,
        "compile_seconds": res.compile.seconds,
        "compile_message": res.compile.message if res.compile.message or ok else res.message,
        "backend": res.backend,
        "isolated": res.isolated,
        "sandbox_flags": list(getattr(res, "flags", []) or []),
        "calibration_cpu_s": res.calibration.get("reference_cpu_s"),
    })
    return row


def _reject_row(sub: Submission, split: str, key: str, settings: BuildSettings, res: RunResult,
                remeasured: bool, limits: Limits) -> dict:
    failed = next((i for i, t in enumerate(res.tests) if t.verdict is not Verdict.OK), None)
    if res.verdict is Verdict.COMPILE_ERROR:
        reason = res.compile.message
    elif failed is not None:
        t = res.tests[failed]
        reason = f"test {failed}: {t.verdict.value}" + (f": {t.message}" if t.message else "")
    else:
        reason = res.message
    if res.verdict is Verdict.TIME_LIMIT_EXCEEDED:
        reason = f"past the cap ({settings.limit_cap:g} x the {limits.time_s:g} s limit): " + reason
    if remeasured:
        reason = "failed on time twice (measured a second time before rejecting): " + reason
    return {"submission_key": key, "submission_id": sub.content_hash, "problem_id": sub.problem_id, "split": split,
            "language": sub.language.value, **solution_columns(sub), "verdict": res.verdict.value,
            "cause": reject_cause(res.verdict), "remeasured": remeasured,
            "reason": reason[:4000], "failed_test": failed, "backend": res.backend,
            "settings_hash": settings.settings_hash}
