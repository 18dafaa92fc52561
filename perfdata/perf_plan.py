"""Planning a CodeContests-Perf build: the start-up repair of the output folder, what it already
holds (resume: the done and the to-redo index), and ``plan_build``, which streams the source,
commits the rows that need no execution and yields the ``Batch``es still to measure."""
from __future__ import annotations

import collections
import hashlib
import logging
import os
import shutil
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from perfalign.sandbox import Limits, Verdict, toolchains
from perfalign.sandbox.clock import DEFAULT_CLOCK, ClockMismatch

from . import shards
from .codecontests import SourceUnreadable, check_source_files, iter_problems
from .perf import (
    INFRA_CAUSES,
    KEY_COLUMNS,
    SPOOL,
    TABLES,
    Batch,
    BuildPlan,
    BuildSettings,
    base_row,
    problem_limits,
    reject_cause,
    submission_key,
)
from .records import ErrorRecord, Problem, Submission, Tests
from .schema import TIMING_CAUSES, arrow_schema, conform

log = logging.getLogger(__name__)

_PROBLEM_FLUSH_BYTES = 64 << 20


# --------------------------------------------------------------------------- start-up repair
def repair(out_dir: Path) -> list[str]:
    """Make the output folder consistent before a (re)run; returns the quarantine messages.

    Leftover temp files and spooled tests go; corrupt shards go to quarantine/ (their keys are
    then missing, so the run rebuilds them); shards written by an older version are rewritten
    in the current schema and split naming; rejects without their submission row (a batch that
    crashed between its two shards, or a quarantined submissions shard) are dropped."""
    out_dir = Path(out_dir)
    shards.prepare_folder(out_dir)
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
                direct_rows.append(base_row(sub, p.split, key, settings) | {"status": "not_run", "verdict": "NOT_RUN"})
            elif not supported:
                direct_rows.append(base_row(sub, p.split, key, settings) | {
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
