"""Schemas of the CodeContests-Perf tables (documented in the dataset card)."""
from __future__ import annotations

import pyarrow as pa

CAUSES_DOC = ("time (past the cap: limit_cap x the time limit) / memory / wrong_answer / runtime_error / "
              "compile_error / output_limit / sandbox_error (a fault of the sandbox that persisted after "
              "retries; re-measured on the next run)")
TIMING_CAUSES = frozenset({"time"})  # re-measured by --remeasure-rejects

# (column, arrow type, description): one source of truth for Parquet and the card.
PROBLEMS = [
    ("problem_id", pa.string(), "CodeContests problem name (unique key)"),
    ("name", pa.string(), "problem name"),
    ("split", pa.string(), "source split: train / valid / test"),
    ("held_out", pa.bool_(), "reserved for evaluation (the test split)"),
    ("description", pa.string(), "problem statement"),
    ("time_limit_s", pa.float64(), "time limit used for the runs (dataset limit x factor)"),
    ("memory_limit_mb", pa.int64(), "memory limit, MB"),
    ("source", pa.int64(), "CodeContests source id"),
    ("difficulty", pa.int64(), "CodeContests difficulty"),
    ("cf_rating", pa.int64(), "Codeforces rating (0 if unknown)"),
    ("cf_tags", pa.list_(pa.string()), "Codeforces tags"),
    ("test_inputs", pa.list_(pa.string()), "stdin of every test (public, private, generated)"),
    ("test_outputs", pa.list_(pa.string()), "expected stdout of every test"),
    ("n_correct", pa.int64(), "solutions labelled correct in the source"),
    ("n_incorrect", pa.int64(), "solutions labelled incorrect in the source"),
    ("content_hash", pa.string(), "hash of the tests and limits"),
]

SUBMISSIONS = [
    ("submission_key", pa.string(), "unique key: submission content x problem tests x measurement settings"),
    ("submission_id", pa.string(), "hash of problem, language, label and code"),
    ("problem_id", pa.string(), "problem key"),
    ("problem_name", pa.string(), "problem name"),
    ("split", pa.string(), "source split"),
    ("language", pa.string(), "cpp / python3 / java / python2 / unknown"),
    ("language_id", pa.int64(), "CodeContests language id"),
    ("solution", pa.string(), "source code (bytes that are not UTF-8 shown as U+FFFD; exact bytes in solution_bytes)"),
    ("solution_bytes", pa.binary(), "the exact source bytes, only when they are not valid UTF-8 (else null)"),
    ("is_correct", pa.bool_(), "label from the source dataset"),
    ("status", pa.string(), "measured / rejected / not_run (incorrect) / unsupported"),
    ("reject_cause", pa.string(), "why a correct-labelled submission was rejected: " + CAUSES_DOC),
    ("remeasured", pa.bool_(),
     "measured again after failing only on time (or after an earlier reject, see previous_cause)"),
    ("previous_cause", pa.string(),
     "cause of an earlier reject this row replaces (a --remeasure-rejects or sandbox-error rerun; "
     "past_limit: a row measured under another limit_cap)"),
    ("verdict", pa.string(), "sandbox verdict (NOT_RUN for incorrect submissions)"),
    ("runtime_s", pa.float64(),
     "mean over tests of the median CPU time: the paper's runtime label (null when not run)"),
    ("past_limit", pa.bool_(),
     "measured, and a run of a test took longer than the problem's time limit on this host: labelled with "
     "its runtime all the same (measured up to limit_cap x the limit); null when not measured"),
    ("limit_cap", pa.float64(),
     "the cap it ran under, a multiple of the problem's time limit (past it: a `time` reject); null when not run"),
    ("test_cpu_times_s", pa.list_(pa.float64()), "per test: median CPU time (user+sys) of the program"),
    ("test_cpu_repeats_s", pa.list_(pa.list_(pa.float64())), "per test: every repeat's CPU time"),
    ("test_wall_times_s", pa.list_(pa.float64()), "per test: median wall time"),
    ("test_max_rss_kb", pa.list_(pa.int64()), "per test: peak RSS, KB"),
    ("test_verdicts", pa.list_(pa.string()), "per test verdicts"),
    ("clock", pa.string(), "what measured it: cpu (CPU time), instructions or cycles (valgrind, deterministic); "
                           "null in rows from before the column: cpu"),
    ("test_clock_counts", pa.list_(pa.float64()),
     "per test: the deterministic clock's value (instructions or estimated cycles; null under cpu)"),
    ("test_native_cpu_repeats_s", pa.list_(pa.list_(pa.float64())),
     "per test: every native run's CPU time beside a deterministic count (the same build outside valgrind: "
     "what a counted reward's CPU time is checked against, sandbox.clock.count_contradicts_cpu; null under cpu)"),
    ("compile_ok", pa.bool_(), "compiled (true for interpreted languages)"),
    ("compile_seconds", pa.float64(), "compile wall time (0 when cached)"),
    ("compile_message", pa.string(), "compiler output"),
    ("repeats", pa.int64(), "runs per test"),
    ("backend", pa.string(), "sandbox backend"),
    ("isolated", pa.bool_(), "false only for the local-unsafe backend"),
    ("sandbox_flags", pa.list_(pa.string()),
     "what the sandbox noted about the run (e.g. retried:N after SANDBOX_ERROR)"),
    ("calibration_cpu_s", pa.float64(), "CPU time of the sandbox's reference program on this host"),
    ("host", pa.string(), "the measuring host: node name and CPU model (sandbox.calibration.host_id)"),
    ("settings_hash", pa.string(), "hash of the measurement settings"),
    ("measured_at", pa.string(), "UTC time"),
]

REJECTS = [
    ("submission_key", pa.string(), "key into submissions"),
    ("submission_id", pa.string(), "hash of problem, language, label and code"),
    ("problem_id", pa.string(), "problem key"),
    ("split", pa.string(), "source split"),
    ("language", pa.string(), "language"),
    ("solution", pa.string(), "source code (bytes that are not UTF-8 shown as U+FFFD; exact bytes in solution_bytes)"),
    ("solution_bytes", pa.binary(), "the exact source bytes, only when they are not valid UTF-8 (else null)"),
    ("verdict", pa.string(), "the failing verdict (WA, TLE, RE, CE, MLE, OLE, SANDBOX_ERROR)"),
    ("cause", pa.string(), CAUSES_DOC),
    ("remeasured", pa.bool_(), "true when it failed only on time and failed again when measured a second time"),
    ("reason", pa.string(), "why: failing test, message, exit code or signal, compiler output"),
    ("failed_test", pa.int64(), "index of the first failing test (null for compile errors)"),
    ("backend", pa.string(), "sandbox backend"),
    ("settings_hash", pa.string(), "hash of the measurement settings"),
]

ERRORS = [
    ("error_key", pa.string(), "unique key of the bad input"),
    ("source", pa.string(), "where the row came from"),
    ("split", pa.string(), "split"),
    ("row_index", pa.int64(), "row index within its split/file"),
    ("problem_name", pa.string(), "problem name if readable"),
    ("submission_index", pa.int64(), "index of the bad submission (null: the whole row)"),
    ("reason", pa.string(), "what is wrong with it"),
]

TABLES = {"submissions": SUBMISSIONS, "problems": PROBLEMS, "rejects": REJECTS, "errors": ERRORS}


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t, _ in TABLES[table]])


def conform(t: pa.Table, table: str) -> pa.Table:
    """``t`` in the current schema of ``table``: columns added since it was written are null."""
    schema = arrow_schema(table)
    cols = [t.column(f.name).cast(f.type) if f.name in t.column_names else pa.nulls(t.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def card_schema(table: str) -> list[tuple[str, str, str]]:
    return [(n, str(t), d) for n, t, d in TABLES[table]]
