"""CodeContests-Perf (paper §IV-A): run every correct submission on all tests of its problem
in the sandbox and record runtimes.

Plain library code: ``plan_build`` repairs the output folder, streams the source, writes the
`problems` / `errors` tables and the rows that need no execution, and yields ``Batch``es of
submissions still missing; ``run_batch`` measures one batch and commits it as atomic shards.
Orchestration (Prefect, Dask) lives in flows/ and only moves batches around.

Nothing a single row or submission does sinks the build: malformed rows are `errors`
records, a submission whose run keeps failing in the sandbox is a `rejects` record with cause
``sandbox_error`` (re-measured on the next run), and corrupt shards are quarantined. A source
*file* that cannot be read stops the build (``SourceUnreadable``: its name and why, in one
line) unless ``allow_partial``, which goes on without it and says so in every summary.
"""
from __future__ import annotations

import collections
import datetime as _dt
import hashlib
import json
import logging
import os
import platform
import shutil
import time
from contextlib import closing, suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from perfalign.common.concurrency import bounded_map
from perfalign.sandbox import Job, Limits, RunResult, Sandbox, SandboxSettings, TestCase, Verdict, toolchains
from perfalign.sandbox.clock import (
    CACHE_GEOMETRY,
    CYCLE_WEIGHTS,
    DEFAULT_CLOCK,
    DETERMINISTIC,
    ClockMismatch,
    check_clock,
    scaled_limits,
)

from . import shards
from .codecontests import SourceUnreadable, check_source_files, iter_problems
from .dataset_card import write_dataset_card
from .records import ErrorRecord, Problem, SpooledTests, Submission, Tests
from .schema import TIMING_CAUSES, arrow_schema, card_schema, conform
from .summary import (  # noqa: F401 - error_lines: the flows and the CLI import it from here
    BuildSummary,
    describe_source,
    error_lines,
    split_globs,
    summarize,
    summary_markdown,
)

log = logging.getLogger("perfalign.perfdata.perf")

CAUSES = {
    Verdict.TIME_LIMIT_EXCEEDED: "time", Verdict.MEMORY_LIMIT_EXCEEDED: "memory",
    Verdict.WRONG_ANSWER: "wrong_answer", Verdict.RUNTIME_ERROR: "runtime_error",
    Verdict.COMPILE_ERROR: "compile_error", Verdict.OUTPUT_LIMIT_EXCEEDED: "output_limit",
    Verdict.SANDBOX_ERROR: "sandbox_error",
}
INFRA_CAUSES = frozenset({"sandbox_error"})    # not the program's fault: re-measured on every run
SPOOL = ".spool"  # per-batch test files (hidden: never published, never matched by the card)
TABLES = ("submissions", "problems", "rejects", "errors")
KEY_COLUMNS = {"submissions": ["submission_key"], "problems": ["problem_id", "content_hash"],
               "rejects": ["submission_key"], "errors": ["error_key"]}
_PROBLEM_FLUSH_BYTES = 64 << 20


@dataclass(frozen=True)
class BuildSettings:
    """Measurement settings: part of every submission's key (change them, re-measure)."""

    repeats: int = 3                # runs per test, median kept, all stored (paper §IV-A)
    time_limit_factor: float = 1.0  # multiply each problem's time limit
    max_tests: int | None = None    # cap tests per problem; None: all (public + private + generated)
    batch_size: int = 8             # submissions per Prefect task
    clock: str = DEFAULT_CLOCK      # what measures the labels (sandbox.clock): cpu, instructions, cycles
    limit_cap: float = 3.0          # past its time limit here, a correct program runs up to this x the limit, labelled

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ValueError("repeats must be >= 1")
        if self.time_limit_factor <= 0:
            raise ValueError("time_limit_factor must be > 0")
        if not self.limit_cap >= 1:
            raise ValueError("limit_cap must be >= 1 (a multiple of the problem's time limit)")
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        check_clock(self.clock)

    @property
    def settings_hash(self) -> str:
        d = asdict(self)
        d.pop("batch_size")  # how work is grouped does not change what is measured
        # rows within the limit do not depend on the cap; those that do record it (limit_cap)
        # and are measured again when it changes (_done_index)
        d.pop("limit_cap")
        d["backend"] = "auto"  # the keys of datasets built when the sandbox's backend was one of these settings
        if d["clock"] == DEFAULT_CLOCK:
            d.pop("clock")  # the keys of datasets built before the clock existed stay valid
        elif d["clock"] == "cycles":  # the model is part of what is measured
            d["cycles_model"] = {"weights": CYCLE_WEIGHTS, "geometry": CACHE_GEOMETRY}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class Batch:
    problem_id: str
    tests: Sequence[TestCase]  # SpooledTests from plan_build: a folder, not the data
    limits: Limits
    submissions: list[Submission]
    split: str
    keys: list[str]
    # per submission: the cause of an earlier reject this measurement replaces (None: first time)
    previous: list[str | None] = field(default_factory=list)

    @property
    def shard_id(self) -> str:
        return hashlib.sha256("\0".join(self.keys).encode()).hexdigest()[:20]


@dataclass
class BatchReport:
    shard_id: str
    counts: dict[str, int] = field(default_factory=dict)  # status -> n


def submission_key(sub: Submission, problem: Problem, settings: BuildSettings) -> str:
    key = f"{sub.content_hash}\0{problem.content_hash}\0{settings.settings_hash}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def reject_cause(verdict: Verdict | str) -> str:
    try:
        return CAUSES.get(Verdict(verdict), str(verdict).lower())
    except ValueError:  # a verdict this version does not know (an older shard)
        return str(verdict).lower()


def _problem_table(p: Problem, limits: Limits, tests: Tests) -> pa.Table:
    """One `problems` row built from the tests' Arrow arrays (no Python copy of the tests)."""
    row = {
        "problem_id": p.problem_id, "name": p.name, "split": p.split, "held_out": p.held_out,
        "description": p.description, "time_limit_s": limits.time_s, "memory_limit_mb": limits.memory_mb,
        "source": p.source, "difficulty": p.difficulty, "cf_rating": p.cf_rating, "cf_tags": p.cf_tags,
        "n_correct": sum(s.is_correct for s in p.submissions),
        "n_incorrect": sum(not s.is_correct for s in p.submissions),
        "content_hash": p.content_hash,
    }
    for name, values in (("test_inputs", tests.inputs), ("test_outputs", tests.outputs)):  # one list of every test
        row[name] = pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values.combine_chunks())
    schema = arrow_schema("problems")
    cols = [v if isinstance(v := row[f.name], pa.Array) else pa.array([v], f.type) for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def _error_row(e: ErrorRecord) -> dict:
    ident = f"{e.source}\0{e.split}\0{e.row_index}\0{e.submission_index}"
    if e.row_index < 0:  # a whole unreadable file: several per split, told apart by the reason
        ident += f"\0{e.reason}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:24]
    return {"error_key": key, "source": e.source, "split": e.split, "row_index": e.row_index,
            "problem_name": e.problem_name, "submission_index": e.submission_index, "reason": e.reason}


def _solution_columns(sub: Submission) -> dict:
    return {"solution": sub.text, "solution_bytes": None if sub.is_utf8 else sub.raw_bytes}


def _base_row(sub: Submission, split: str, key: str, settings: BuildSettings) -> dict:
    return {
        "submission_key": key, "submission_id": sub.content_hash, "problem_id": sub.problem_id,
        "problem_name": sub.problem_id, "split": split, "language": sub.language.value,
        "language_id": sub.language_id, **_solution_columns(sub), "is_correct": sub.is_correct,
        "repeats": settings.repeats, "settings_hash": settings.settings_hash, "clock": settings.clock,
        "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
    }


def problem_limits(p: Problem, settings: BuildSettings) -> tuple[Limits, Tests]:
    tests = p.tests if settings.max_tests is None else p.tests[: settings.max_tests]
    return Limits(time_s=round(p.time_limit_s * settings.time_limit_factor, 3), memory_mb=p.memory_limit_mb), tests


@dataclass
class BuildPlan:
    """What a (re)run still has to do, computed from what the output directory holds."""

    out_dir: Path
    settings: BuildSettings
    errors: int = 0
    pending: int = 0      # submissions still to execute
    skipped_done: int = 0  # already measured with these settings (resume)
    remeasuring: int = 0  # earlier rejects measured again (--remeasure-rejects, sandbox errors)
    quarantined: list[str] = field(default_factory=list)  # one message per corrupt shard moved aside
    skipped_files: list[str] = field(default_factory=list)  # "file: reason" left out under allow_partial
    lock: shards.BuildLock | None = field(default=None, repr=False)

    def release(self) -> None:
        if self.lock:
            self.lock.release()
            self.lock = None


# --------------------------------------------------------------------------- start-up repair
def repair(out_dir: Path) -> list[str]:
    """Make the output folder consistent before a (re)run; returns the quarantine messages.

    Leftover temp files and spooled tests go; corrupt shards go to quarantine/ (their keys are
    then missing, so the run rebuilds them); shards written by an older version are rewritten
    in the current schema and split naming; rejects without their submission row (a batch that
    crashed between its two shards, or a quarantined submissions shard) are dropped."""
    out_dir = Path(out_dir)
    shards.migrate_layout(out_dir)
    shards.clean_temp(out_dir)
    shutil.rmtree(out_dir / SPOOL, ignore_errors=True)
    msgs = []
    for table in TABLES:
        msgs += shards.quarantine_corrupt(out_dir, table, KEY_COLUMNS[table])
    msgs += _upgrade_legacy(out_dir)
    for m in msgs:
        log.warning(m)
    _drop_orphan_rejects(out_dir)
    _drop_absolute_error_sources(out_dir)
    return msgs


def _drop_absolute_error_sources(out_dir: Path) -> None:
    """`errors` rows of older versions named the source by its absolute path; every run streams
    the whole source again and records its errors under names relative to it."""
    for f, t in shards.iter_shards(out_dir, "errors", ["source"]):
        if any(s and s.startswith("/") for s in t.column("source").to_pylist()):
            shards.rewrite_shard(f, arrow_schema("errors"), lambda t: t.filter(
                pc.invert(pc.fill_null(pc.starts_with(t.column("source"), "/"), False))))


def _upgrade_legacy(out_dir: Path) -> list[str]:
    """Shards from before split-named files / new columns: rewrite each in the current form."""
    split_by_key: dict[str, str] | None = None
    msgs = []
    for table in TABLES:
        target = arrow_schema(table)
        for f in shards.shard_files(out_dir, table):
            if shards.split_of(f, table) and shards.read_schema(f).remove_metadata().equals(target):
                continue
            if table == "rejects" and split_by_key is None:
                subs = shards.read_table(out_dir, "submissions", arrow_schema("submissions"),
                                         ["submission_key", "split"])
                split_by_key = dict(zip(subs.column("submission_key").to_pylist(), subs.column("split").to_pylist()))
            groups: dict[str, list[pa.Table]] = collections.defaultdict(list)
            try:
                for t in shards.iter_row_groups(f):
                    t = _fill_legacy(conform(t, table), table, split_by_key)
                    for split in set(t.column("split").to_pylist()):
                        groups[split].append(t.filter(pc.equal(t.column("split"), split)))
            except Exception as e:  # noqa: BLE001 - corrupt beyond its key columns
                msgs.append(shards.quarantine(out_dir, f, e))
                continue
            legacy = shards.split_of(f, table) is None
            sid = shards.shard_id(f, table)
            for split, parts in groups.items():  # an up-to-date name is rewritten in place
                shards.write_shard(out_dir, table, sid, pa.concat_tables(parts), target, shards.clean_split(split))
            if legacy or not groups:
                f.unlink()
    return msgs


def _fill_legacy(t: pa.Table, table: str, split_by_key: dict[str, str] | None) -> pa.Table:
    """Values an older shard lacks: the split of a reject, the cause of a rejection."""
    if table == "rejects":
        splits = [s or (split_by_key or {}).get(k) or "train"
                  for s, k in zip(t.column("split").to_pylist(), t.column("submission_key").to_pylist())]
        causes = [c or reject_cause(v) for c, v in zip(t.column("cause").to_pylist(), t.column("verdict").to_pylist())]
        t = t.set_column(t.schema.get_field_index("split"), "split", pa.array(splits, pa.string()))
        t = t.set_column(t.schema.get_field_index("cause"), "cause", pa.array(causes, pa.string()))
    elif table == "submissions":
        causes = [c or (reject_cause(v) if st == "rejected" else None) for c, v, st in zip(
            t.column("reject_cause").to_pylist(), t.column("verdict").to_pylist(), t.column("status").to_pylist())]
        t = t.set_column(t.schema.get_field_index("reject_cause"), "reject_cause", pa.array(causes, pa.string()))
    if t.column("split").null_count:
        t = t.set_column(t.schema.get_field_index("split"), "split", pc.fill_null(t.column("split"), "train"))
    return t


def _drop_orphan_rejects(out_dir: Path) -> None:
    """A batch commits rejects first, then submissions: reject rows whose submission row is
    missing are from a batch that crashed in between (or a quarantined shard) and will run again."""
    if not shards.shard_files(out_dir, "rejects"):
        return
    have = pa.array(list(shards.read_column(out_dir, "submissions", "submission_key")), pa.string())
    for f, t in shards.iter_shards(out_dir, "rejects", ["submission_key"]):
        if not pc.all(pc.is_in(t.column("submission_key"), have)).as_py():
            shards.rewrite_shard(f, arrow_schema("rejects"),
                                 lambda t: t.filter(pc.is_in(t.column("submission_key"), have)))


def _remove_rows(out_dir: Path, keys: set[str], where: dict[str, dict[str, set[Path]]]) -> None:
    """Take the rows of ``keys`` out of their shards (``where``: key -> table -> shards), submissions
    first, so a crash in between leaves the key missing, i.e. measured again, never duplicated."""
    drop = pa.array(sorted(keys), pa.string())
    for table in ("submissions", "rejects"):
        for f in sorted(set().union(*(where[k][table] for k in keys))):
            if f.exists():
                shards.rewrite_shard(f, arrow_schema(table),
                                     lambda t: t.filter(pc.invert(pc.is_in(t.column("submission_key"), drop))))


def _done_index(out_dir: Path, remeasure_rejects: bool, limit_cap: float) -> tuple[set[str], dict, dict]:
    """What the output folder already holds: the submission keys, key -> cause of a reject to
    measure again (or ``past_limit``: a row labelled past the limit under another cap), and key
    to redo -> table -> the shards holding it. A row whose outcome the cap decided (labelled past
    the limit, or a `time` reject) is measured again when the cap changes (rows from before the
    cap count as cap 1)."""
    keys: set[str] = set()
    redo: dict[str, str] = {}
    where: dict[str, dict[str, set[Path]]] = {}
    again = INFRA_CAUSES | (TIMING_CAUSES if remeasure_rejects else frozenset())
    cols = ["submission_key", "status", "reject_cause", "past_limit", "limit_cap"]
    for f, t in shards.iter_shards(out_dir, "submissions", cols):
        for k, st, cause, past, cap in zip(*(t.column(c).to_pylist() for c in cols)):
            keys.add(k)
            rejected = st == "rejected"
            capped = past or (rejected and cause in TIMING_CAUSES)
            if (rejected and cause in again) or (capped and (cap or 1.0) != limit_cap):
                redo[k] = cause if rejected else "past_limit"
                where.setdefault(k, {"submissions": set(), "rejects": set()})["submissions"].add(f)
    if redo:
        for f, t in shards.iter_shards(out_dir, "rejects", ["submission_key"]):
            for k in t.column("submission_key").to_pylist():
                if k in where:
                    where[k]["rejects"].add(f)
    return keys, redo, where


def check_same_clock(out_dir: Path, clock: str) -> None:
    """Refuse to add labels of ``clock`` to a dataset measured with another (rows from before
    the clock column count as cpu). A row's ``clock`` is what really measured it, so a
    deterministic build holds honest cpu rows: a fallback (``clock_fallback:`` flag, e.g. Java)
    and a program that failed before a clock ran it (compile error, unsupported language); any
    other cpu row (a label, or a not-run row of a cpu build) is another clock's."""
    seen = set()
    for _, t in shards.iter_shards(out_dir, "submissions", ["clock", "sandbox_flags", "verdict"]):
        for c, flags, verdict in zip(*(t.column(k).to_pylist() for k in ("clock", "sandbox_flags", "verdict"))):
            c = c or DEFAULT_CLOCK
            if c == DEFAULT_CLOCK and clock != DEFAULT_CLOCK and (
                    verdict not in (None, "OK") or any(f.startswith("clock_fallback:") for f in flags or ())):
                continue
            seen.add(c)
    if seen - {clock}:
        raise ClockMismatch(f"{out_dir} holds labels measured with the {', '.join(sorted(seen))} clock; this build "
                            f"asks for {clock}: a dataset never mixes clocks (use another output folder)")


# --------------------------------------------------------------------------- planning
def plan_build(source: str, out_dir: Path, settings: BuildSettings, limit_problems: int | None = None,
               plan: BuildPlan | None = None, remeasure_rejects: bool = False,
               allow_partial: bool = False) -> Iterator[Batch]:
    """Yield batches of correct submissions that still need measuring.

    Side effects (all idempotent, atomic shards): the start-up ``repair``; problems, errors and
    the not-run rows (incorrect or unsupported-language submissions) are committed as they
    stream past. Rejects whose cause is ``sandbox_error`` are measured again on every run,
    those caused by time too with ``remeasure_rejects``. Holds the output folder's build lock
    until ``plan.release()``. A source file that cannot be read raises ``SourceUnreadable``
    (before anything runs when its damage shows at opening), unless ``allow_partial``: then it
    is left out, logged as a warning and listed in ``plan.skipped_files``.
    """
    out_dir = Path(out_dir)
    plan = plan or BuildPlan(out_dir, settings)
    unreadable = check_source_files(source)
    if unreadable and not allow_partial:
        raise SourceUnreadable(unreadable)
    plan.lock = plan.lock or shards.BuildLock(out_dir)
    plan.quarantined += repair(out_dir)
    check_same_clock(out_dir, settings.clock)
    done_keys, done_redo, done_where = _done_index(out_dir, remeasure_rejects, settings.limit_cap)
    probs = shards.read_table(out_dir, "problems", arrow_schema("problems"), ["problem_id", "content_hash"])
    done_problems = set(zip(probs.column("problem_id").to_pylist(), probs.column("content_hash").to_pylist()))
    done_errors = shards.read_column(out_dir, "errors", "error_key")
    prob_tables: list[pa.Table] = []
    err_rows: list[dict] = []
    direct_rows: list[dict] = []

    def flush(force: bool = False) -> None:
        if err_rows and (force or len(err_rows) >= 256):
            _commit(out_dir, "errors", err_rows)
        if prob_tables and (force or len(prob_tables) >= 64
                            or sum(t.nbytes for t in prob_tables) >= _PROBLEM_FLUSH_BYTES):
            _commit(out_dir, "problems", prob_tables)
        if direct_rows and (force or len(direct_rows) >= 512):
            _commit(out_dir, "submissions", direct_rows)

    def error(item: ErrorRecord) -> None:
        row = _error_row(item)
        if row["error_key"] not in done_errors:
            err_rows.append(row)
            done_errors.add(row["error_key"])
        plan.errors += 1

    for item in iter_problems(source, limit=limit_problems):
        if isinstance(item, ErrorRecord):
            if item.unreadable_file:
                if not allow_partial:
                    flush(force=True)  # what was read is kept: a rerun resumes
                    raise SourceUnreadable([f"{item.source}: {item.reason}"])
                plan.skipped_files.append(f"{item.source}: {item.reason}")
                log.warning("SKIPPED (allow_partial): source file %s: %s", item.source, item.reason)
            error(item)
            continue
        p = item
        limits, tests = problem_limits(p, settings)
        if (p.problem_id, p.content_hash) not in done_problems:
            try:
                prob_tables.append(_problem_table(p, limits, tests))
            except (pa.ArrowException, OverflowError) as e:  # e.g. tests beyond 2 GB of text
                error(ErrorRecord(p.origin, p.split, -1, p.name, f"problem row not writable: {type(e).__name__}: {e}"))
                continue
            done_problems.add((p.problem_id, p.content_hash))
        pending: list[tuple[str, Submission, str | None]] = []
        redo: set[str] = set()
        for sub in p.submissions:
            key = submission_key(sub, p, settings)
            previous = done_redo.pop(key, None)
            if key in done_keys and previous is None:
                plan.skipped_done += 1
                continue
            done_keys.add(key)
            if previous is not None:
                redo.add(key)
            supported, why = toolchains.supported(sub.language)
            if not sub.is_correct:
                direct_rows.append(_base_row(sub, p.split, key, settings) | {"status": "not_run", "verdict": "NOT_RUN"})
            elif not supported:
                direct_rows.append(_base_row(sub, p.split, key, settings) | {
                    "status": "unsupported", "verdict": Verdict.UNSUPPORTED_LANGUAGE.value, "compile_message": why,
                    "previous_cause": previous})
            else:
                pending.append((key, sub, previous))
        if redo:  # their old rows go before the new measurement is queued
            _remove_rows(out_dir, redo, done_where)
            plan.remeasuring += len(redo)
        flush()
        batches = list(_batches(p, tests, limits, pending, settings, out_dir))
        del item, p, tests  # the row's Arrow data goes before its batches run
        pa.default_memory_pool().release_unused()  # and back to the OS, not kept by the allocator
        for b in batches:
            plan.pending += len(b.submissions)
            yield b
        del batches
    flush(force=True)


def _batches(p: Problem, tests: Tests, limits: Limits, pending: list, settings: BuildSettings,
             out_dir: Path) -> Iterator[Batch]:
    """Spool the tests once, give each batch its own hard-linked copy (it deletes it when done)."""
    if not pending:
        return
    root = out_dir / SPOOL / f"{p.content_hash}-{os.getpid()}"
    chunks = [pending[i:i + settings.batch_size] for i in range(0, len(pending), settings.batch_size)]
    spooled = tests.spool(root / "tests")
    batches = []
    for j, chunk in enumerate(chunks):
        batches.append(Batch(p.problem_id, spooled.link_copy(root / f"b{j}"), limits, [s for _, s, _ in chunk],
                             p.split, [k for k, _, _ in chunk], [prev for _, _, prev in chunk]))
    spooled.remove()
    yield from batches


def _commit(out_dir: Path, table: str, items: list) -> None:
    """Write ``items`` (row dicts, or the one-row tables of `problems`) as one shard per split,
    named by a hash of their keys; then empty ``items``."""
    tables = table == "problems"
    get = (lambda it, c: it.column(c)[0].as_py()) if tables else (lambda it, c: it[c])
    by_split: dict[str, list] = collections.defaultdict(list)
    for it in items:
        by_split[get(it, "split")].append(it)
    for split, group in by_split.items():
        ident = "\0".join(str(get(it, c)) for it in group for c in KEY_COLUMNS[table])
        shards.write_shard(out_dir, table, hashlib.sha256(ident.encode()).hexdigest()[:20],
                           pa.concat_tables(group) if tables else group, arrow_schema(table),
                           shards.clean_split(split), plain=("test_inputs", "test_outputs") if tables else ())
    items.clear()


# --------------------------------------------------------------------------- measuring
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
    row = _base_row(sub, split, key, settings)
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
            "language": sub.language.value, **_solution_columns(sub), "verdict": res.verdict.value,
            "cause": reject_cause(res.verdict), "remeasured": remeasured,
            "reason": reason[:4000], "failed_test": failed, "backend": res.backend,
            "settings_hash": settings.settings_hash}


# --------------------------------------------------------------------------- the card

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
