"""CodeContests-Perf (paper §IV-A): run every correct submission on all tests of its problem
in the sandbox and record runtimes. This module holds the build's settings, the keys and the
shapes its steps share; the steps are plain library code:

- ``perf_plan.plan_build`` repairs the output folder, finds what it already holds (resume),
  streams the source, writes the `problems` / `errors` tables and the rows that need no
  execution, and yields ``Batch``es of submissions still missing;
- ``perf_batch.run_batch`` measures one batch and commits it as atomic shards;
- ``perf_build.build`` runs both in one process and ``finalize`` writes the card.
Orchestration (Prefect, Dask) lives in flows/ and only moves batches around.

Nothing a single row or submission does sinks the build: malformed rows are `errors`
records, a submission whose run keeps failing in the sandbox is a `rejects` record with cause
``sandbox_error`` (re-measured on the next run), and corrupt shards are quarantined. A source
*file* that cannot be read stops the build (``SourceUnreadable``: its name and why, in one
line) unless ``allow_partial``, which goes on without it and says so in every summary.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from perfalign.sandbox import Limits, TestCase, Verdict
from perfalign.sandbox.calibration import host_id
from perfalign.sandbox.clock import CACHE_GEOMETRY, CYCLE_WEIGHTS, DEFAULT_CLOCK, check_clock

from . import shards
from .records import Problem, Submission, Tests

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


def submission_key(sub: Submission, problem: Problem, settings: BuildSettings) -> str:
    key = f"{sub.content_hash}\0{problem.content_hash}\0{settings.settings_hash}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def reject_cause(verdict: Verdict | str) -> str:
    try:
        return CAUSES.get(Verdict(verdict), str(verdict).lower())
    except ValueError:  # a verdict this version does not know (an older shard)
        return str(verdict).lower()


def solution_columns(sub: Submission) -> dict:
    return {"solution": sub.text, "solution_bytes": None if sub.is_utf8 else sub.raw_bytes}


def base_row(sub: Submission, split: str, key: str, settings: BuildSettings) -> dict:
    return {
        "submission_key": key, "submission_id": sub.content_hash, "problem_id": sub.problem_id,
        "problem_name": sub.problem_id, "split": split, "language": sub.language.value,
        "language_id": sub.language_id, **solution_columns(sub), "is_correct": sub.is_correct,
        "repeats": settings.repeats, "settings_hash": settings.settings_hash, "clock": settings.clock,
        "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": host_id(),
    }


def problem_limits(p: Problem, settings: BuildSettings) -> tuple[Limits, Tests]:
    tests = p.tests if settings.max_tests is None else p.tests[: settings.max_tests]
    return Limits(time_s=round(p.time_limit_s * settings.time_limit_factor, 3), memory_mb=p.memory_limit_mb), tests
