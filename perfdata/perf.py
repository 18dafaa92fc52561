"""CodeContests-Perf (paper §IV-A): run every correct submission on all tests of its problem
in the sandbox and record runtimes.

Plain library code: ``plan_build`` streams the source, writes the `problems` / `errors`
tables and the rows that need no execution, and yields ``Batch``es of submissions still
missing; ``run_batch`` measures one batch and commits it as atomic shards. Orchestration
(Prefect, Dask) lives in flows/ and only moves batches around.
"""
from __future__ import annotations

import collections
import datetime as _dt
import hashlib
import json
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from sandbox import Job, Limits, RunResult, Sandbox, TestCase, Verdict
from sandbox import languages

from . import shards
from .codecontests import ErrorRecord, Problem, Submission, iter_problems
from .dataset_card import write_dataset_card
from .schema import arrow_schema, card_schema

SANDBOX_RETRIES = 2  # per submission, before the batch fails for the orchestrator to retry


@dataclass(frozen=True)
class BuildSettings:
    """Measurement settings: part of every submission's key (change them, re-measure)."""

    repeats: int = 3
    backend: str = "auto"
    time_limit_factor: float = 1.0
    max_tests: int | None = None  # None: all tests (public + private + generated)
    batch_size: int = 8

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ValueError("repeats must be >= 1")
        if self.time_limit_factor <= 0:
            raise ValueError("time_limit_factor must be > 0")
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")

    @property
    def settings_hash(self) -> str:
        d = asdict(self)
        d.pop("batch_size")  # how work is grouped does not change what is measured
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class Batch:
    problem_id: str
    tests: list[TestCase]
    limits: Limits
    submissions: list[Submission]
    split: str
    keys: list[str]

    @property
    def shard_id(self) -> str:
        return hashlib.sha256("\0".join(self.keys).encode()).hexdigest()[:20]


@dataclass
class BatchReport:
    shard_id: str
    counts: dict[str, int] = field(default_factory=dict)  # status -> n
    by_language: dict[str, dict[str, int]] = field(default_factory=dict)
    executions: int = 0  # test executions (tests x repeats actually run)
    seconds: float = 0.0


class SandboxInfraError(RuntimeError):
    """A submission kept getting SANDBOX_ERROR: the batch is not committed; retry it."""


def submission_key(sub: Submission, problem: Problem, settings: BuildSettings) -> str:
    return hashlib.sha256(f"{sub.content_hash}\0{problem.content_hash}\0{settings.settings_hash}".encode()).hexdigest()[:32]


def _problem_row(p: Problem, limits: Limits, tests: list[TestCase]) -> dict:
    return {
        "problem_id": p.problem_id, "name": p.name, "split": p.split, "held_out": p.held_out,
        "description": p.description, "time_limit_s": limits.time_s, "memory_limit_mb": limits.memory_mb,
        "source": p.source, "difficulty": p.difficulty, "cf_rating": p.cf_rating, "cf_tags": p.cf_tags,
        "test_inputs": [t.input for t in tests], "test_outputs": [t.expected or "" for t in tests],
        "n_correct": sum(s.is_correct for s in p.submissions),
        "n_incorrect": sum(not s.is_correct for s in p.submissions),
        "content_hash": p.content_hash,
    }


def _error_row(e: ErrorRecord) -> dict:
    key = hashlib.sha256(f"{e.source}\0{e.split}\0{e.row_index}\0{e.submission_index}".encode()).hexdigest()[:24]
    return {"error_key": key, "source": e.source, "split": e.split, "row_index": e.row_index,
            "problem_name": e.problem_name, "submission_index": e.submission_index, "reason": e.reason}


def _base_row(sub: Submission, split: str, key: str, settings: BuildSettings) -> dict:
    return {
        "submission_key": key, "submission_id": sub.content_hash, "problem_id": sub.problem_id,
        "problem_name": sub.problem_id, "split": split, "language": sub.language.value,
        "language_id": sub.language_id, "solution": sub.solution, "is_correct": sub.is_correct,
        "repeats": settings.repeats, "settings_hash": settings.settings_hash,
        "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
    }


def problem_limits(p: Problem, settings: BuildSettings) -> tuple[Limits, list[TestCase]]:
    tests = p.tests if settings.max_tests is None else p.tests[: settings.max_tests]
    return Limits(time_s=round(p.time_limit_s * settings.time_limit_factor, 3), memory_mb=p.memory_limit_mb), tests


@dataclass
class BuildPlan:
    """What a (re)run still has to do, computed from what the output directory holds."""

    out_dir: Path
    settings: BuildSettings
    problems_seen: int = 0
    problems_new: int = 0
    errors: int = 0
    pending: int = 0      # submissions still to execute
    skipped_done: int = 0  # already measured with these settings (resume)
    recorded: int = 0     # written without running (incorrect / unsupported)


def plan_build(source: str, out_dir: Path, settings: BuildSettings, limit_problems: int | None = None,
               plan: BuildPlan | None = None) -> Iterator[Batch]:
    """Yield batches of correct submissions that still need measuring.

    Side effects (all idempotent, atomic shards): problems, errors and the not-run rows
    (incorrect or unsupported-language submissions) are committed as they stream past.
    """
    out_dir = Path(out_dir)
    plan = plan or BuildPlan(out_dir, settings)
    shards.clean_temp(out_dir)
    _drop_orphan_rejects(out_dir)
    done_keys = shards.read_column(out_dir, "submissions", "submission_key")
    done_problems = {(r["problem_id"], r["content_hash"]) for r in _problem_keys(out_dir)}
    done_errors = shards.read_column(out_dir, "errors", "error_key")
    prob_rows, err_rows, direct_rows = [], [], []

    def flush(force: bool = False) -> None:
        if err_rows and (force or len(err_rows) >= 256):
            _commit(out_dir, "errors", err_rows, "error_key")
        if prob_rows and (force or len(prob_rows) >= 64):
            _commit(out_dir, "problems", prob_rows, "problem_id")
        if direct_rows and (force or len(direct_rows) >= 512):
            _commit(out_dir, "submissions", direct_rows, "submission_key")

    for item in iter_problems(source, limit=limit_problems):
        if isinstance(item, ErrorRecord):
            row = _error_row(item)
            if row["error_key"] not in done_errors:
                err_rows.append(row)
                done_errors.add(row["error_key"])
            plan.errors += 1
            continue
        p = item
        plan.problems_seen += 1
        limits, tests = problem_limits(p, settings)
        if (p.problem_id, p.content_hash) not in done_problems:
            prob_rows.append(_problem_row(p, limits, tests))
            done_problems.add((p.problem_id, p.content_hash))
            plan.problems_new += 1
        pending: list[tuple[str, Submission]] = []
        for sub in p.submissions:
            key = submission_key(sub, p, settings)
            if key in done_keys:
                plan.skipped_done += 1
                continue
            done_keys.add(key)
            supported, why = languages.supported(sub.language)
            if not sub.is_correct:
                direct_rows.append(_base_row(sub, p.split, key, settings) | {"status": "not_run", "verdict": "NOT_RUN"})
                plan.recorded += 1
            elif not supported:
                direct_rows.append(_base_row(sub, p.split, key, settings) | {
                    "status": "unsupported", "verdict": Verdict.UNSUPPORTED_LANGUAGE.value, "compile_message": why})
                plan.recorded += 1
            else:
                pending.append((key, sub))
        flush()
        for i in range(0, len(pending), settings.batch_size):
            chunk = pending[i:i + settings.batch_size]
            plan.pending += len(chunk)
            yield Batch(p.problem_id, tests, limits, [s for _, s in chunk], p.split, [k for k, _ in chunk])
    flush(force=True)


def _problem_keys(out_dir: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for f in shards.shard_files(out_dir, "problems"):
        rows += pq.read_table(f, columns=["problem_id", "content_hash"]).to_pylist()
    return rows


def _commit(out_dir: Path, table: str, rows: list[dict], key: str) -> None:
    shard_id = hashlib.sha256("\0".join(str(r[key]) for r in rows).encode()).hexdigest()[:20]
    shards.write_shard(out_dir, table, shard_id, list(rows), arrow_schema(table))
    rows.clear()


def _drop_orphan_rejects(out_dir: Path) -> None:
    """A batch commits rejects first, then submissions: rejects without their submissions
    shard are from a batch that crashed in between and will run again."""
    have = {p.name[len("submissions-"):] for p in shards.shard_files(out_dir, "submissions")}
    for p in shards.shard_files(out_dir, "rejects"):
        if p.name[len("rejects-"):] not in have:
            p.unlink(missing_ok=True)


def run_batch(batch: Batch, settings: BuildSettings, out_dir: Path, sandbox: Sandbox | None = None) -> BatchReport:
    """Measure a batch and commit it (rejects shard, then submissions shard)."""
    import time

    t0 = time.monotonic()
    own = sandbox is None
    sb = sandbox or Sandbox(backend=settings.backend)
    try:
        results = []
        for sub in batch.submissions:
            job = Job(sub.solution, sub.language, batch.tests, batch.limits, settings.repeats, stop_on_failure=True)
            for _attempt in range(SANDBOX_RETRIES + 1):
                res = sb.run_job(job)
                if res.verdict is not Verdict.SANDBOX_ERROR:
                    break
            else:
                raise SandboxInfraError(f"{batch.problem_id}: sandbox error persisted: {res.message}")
            results.append(res)
    finally:
        if own:
            sb.close()
    report = BatchReport(batch.shard_id)
    sub_rows, rej_rows = [], []
    for sub, key, res in zip(batch.submissions, batch.keys, results):
        row = _measured_row(sub, batch.split, key, settings, res)
        sub_rows.append(row)
        if row["status"] == "rejected":
            rej_rows.append(_reject_row(sub, key, settings, res))
        report.counts[row["status"]] = report.counts.get(row["status"], 0) + 1
        lang = report.by_language.setdefault(sub.language.value, {})
        lang[row["status"]] = lang.get(row["status"], 0) + 1
        report.executions += sum(len(t.cpu_times_s) for t in res.tests)
    shards.write_shard(out_dir, "rejects", batch.shard_id, rej_rows, arrow_schema("rejects"))
    shards.write_shard(out_dir, "submissions", batch.shard_id, sub_rows, arrow_schema("submissions"))
    report.seconds = time.monotonic() - t0
    return report


def _measured_row(sub: Submission, split: str, key: str, settings: BuildSettings, res: RunResult) -> dict:
    row = _base_row(sub, split, key, settings)
    ok = res.verdict is Verdict.OK
    row.update({
        "status": "measured" if ok else ("unsupported" if res.verdict is Verdict.UNSUPPORTED_LANGUAGE else "rejected"),
        "verdict": res.verdict.value,
        "runtime_s": res.mean_cpu_time_s if ok else None,
        "test_cpu_times_s": [t.cpu_time_s for t in res.tests],
        "test_cpu_repeats_s": [t.cpu_times_s for t in res.tests],
        "test_wall_times_s": [t.wall_time_s for t in res.tests],
        "test_max_rss_kb": [t.max_rss_kb for t in res.tests],
        "test_verdicts": [t.verdict.value for t in res.tests],
        "compile_ok": res.compile.ok,
        "compile_seconds": res.compile.seconds,
        "compile_message": res.compile.message,
        "backend": res.backend,
        "isolated": res.isolated,
        "calibration_cpu_s": res.calibration.get("reference_cpu_s"),
    })
    return row


def _reject_row(sub: Submission, key: str, settings: BuildSettings, res: RunResult) -> dict:
    failed = next((i for i, t in enumerate(res.tests) if t.verdict is not Verdict.OK), None)
    if res.verdict is Verdict.COMPILE_ERROR:
        reason = res.compile.message
    elif failed is not None:
        t = res.tests[failed]
        reason = f"test {failed}: {t.verdict.value}" + (f": {t.message}" if t.message else "")
    else:
        reason = res.message
    return {"submission_key": key, "submission_id": sub.content_hash, "problem_id": sub.problem_id,
            "language": sub.language.value, "solution": sub.solution, "verdict": res.verdict.value,
            "reason": reason[:4000], "failed_test": failed, "backend": res.backend,
            "settings_hash": settings.settings_hash}


# --------------------------------------------------------------------------- summary + card
@dataclass
class BuildSummary:
    problems: int
    held_out_problems: int
    errors: int
    submissions: int
    status: dict[str, int]
    by_language: dict[str, dict[str, int]]
    test_executions: int
    wall_seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(out_dir: Path) -> BuildSummary:
    import pyarrow.compute as pc

    probs = shards.read_table(out_dir, "problems", arrow_schema("problems"), ["problem_id", "held_out"])
    subs = shards.read_table(out_dir, "submissions", arrow_schema("submissions"),
                             ["status", "language", "test_cpu_repeats_s"])
    errs = shards.read_table(out_dir, "errors", arrow_schema("errors"), ["error_key"])
    status = collections.Counter(subs.column("status").to_pylist())
    by_lang: dict[str, dict[str, int]] = {}
    for st, lang in zip(subs.column("status").to_pylist(), subs.column("language").to_pylist()):
        d = by_lang.setdefault(lang, {})
        d[st] = d.get(st, 0) + 1
    execs = sum(sum(len(r) for r in (reps or [])) for reps in subs.column("test_cpu_repeats_s").to_pylist())
    return BuildSummary(
        problems=len(set(probs.column("problem_id").to_pylist())),
        held_out_problems=len({p for p, h in zip(probs.column("problem_id").to_pylist(), probs.column("held_out").to_pylist()) if h}),
        errors=errs.num_rows,
        submissions=subs.num_rows,
        status=dict(status),
        by_language=by_lang,
        test_executions=execs,
    ) if probs.num_rows or subs.num_rows else BuildSummary(0, 0, errs.num_rows, 0, {}, {}, 0)


def finalize(out_dir: Path, source: str, settings: BuildSettings) -> Path:
    """Write the dataset card. Only tables with rows get a config: `datasets` cannot load an
    empty split, so an absent `rejects` / `errors` config means that table is empty."""
    out_dir = Path(out_dir)
    desc = {
        "submissions": "Every submission with its label, sandbox verdict and measured CPU times.",
        "problems": "Problems with tests and limits.",
        "rejects": "Submissions labelled correct that failed here (the paper omits them; kept traceable).",
        "errors": "Malformed source rows, with the reason (nothing is silently dropped).",
    }
    tables = {t: {"data_files": f"data/{t}-*.parquet", "description": desc[t], "schema": card_schema(t)}
              for t in ("submissions", "problems", "rejects", "errors") if shards.shard_files(out_dir, t)}
    if not tables:
        raise ValueError(f"{out_dir}: nothing was built (no problems in the source?)")
    return write_dataset_card(
        out_dir, title="CodeContests-Perf",
        description=("Runtimes of CodeContests submissions measured in an isolated sandbox "
                     "(perfalign; paper: Performance-Aligned LLMs for Generating Fast Code, §IV-A). "
                     f"Source: `{source}`. Settings: repeats={settings.repeats}, "
                     f"time_limit_factor={settings.time_limit_factor}, max_tests={settings.max_tests}. "
                     "`runtime_s` is the mean over tests of the median CPU time (user+sys) of the program."),
        tables=tables,
    )


def build(source: str, out_dir: Path, settings: BuildSettings, limit_problems: int | None = None,
          workers: int = 1, on_batch: Callable[[BatchReport], None] | None = None) -> BuildSummary:
    """Single-process build (no Prefect): for library users and tests. The flow
    `build_codecontests_perf` does the same through Prefect tasks."""
    import time

    t0 = time.monotonic()
    with Sandbox(backend=settings.backend, workers=workers) as sb:
        import concurrent.futures as cf

        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            pending: set[cf.Future] = set()

            def drain(until: int) -> None:  # bounded in flight: the plan streams, never all in memory
                nonlocal pending
                while len(pending) > until:
                    done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for f in done:
                        rep = f.result()
                        if on_batch:
                            on_batch(rep)

            for b in plan_build(source, out_dir, settings, limit_problems):
                pending.add(pool.submit(run_batch, b, settings, out_dir, sb))
                drain(2 * workers)
            drain(0)
    finalize(out_dir, source, settings)
    summary = summarize(out_dir)
    summary.wall_seconds = round(time.monotonic() - t0, 2)
    return summary
