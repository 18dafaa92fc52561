"""Which CodeContests-Perf submissions carry a runtime label, and the per-language median of
those labels: one rule for the triplets' pairs (perfdata.triplets), RLPF's reward baseline
(alignment.data, Eq. 4) and the evaluation's contest baseline (evaluation.tasks.codecontests)."""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from types import SimpleNamespace
from typing import Iterable, Mapping

from perfalign.sandbox.clock import native_cpu_s

# The columns measured_correct reads.
MEASURED_COLUMNS = ("problem_id", "language", "is_correct", "status", "verdict", "runtime_s")


def measured_correct(row: Mapping) -> bool:
    """A correct submission with a usable runtime label (paper §IV-A: runtimes of the correct
    solutions): labelled correct by the source, measured by perfdata.perf (status "measured",
    verdict "OK") and a finite, non-negative ``runtime_s``."""
    rt = row.get("runtime_s")
    return (bool(row.get("is_correct")) and row.get("status") == "measured" and row.get("verdict") == "OK"
            and rt is not None and math.isfinite(rt) and rt >= 0)


def measured_by_problem(rows: Iterable[Mapping]) -> dict[str, dict[str, list[Mapping]]]:
    """The :func:`measured_correct` rows, problem_id -> language -> rows (input order)."""
    out: dict[str, dict[str, list[Mapping]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if measured_correct(r):
            out[r["problem_id"]][r["language"]].append(r)
    return out


def language_medians(by_language: Mapping[str, list[Mapping]]) -> dict[str, float]:
    """language -> median ``runtime_s`` of its rows: the baseline runtime of Eq. 4 (RLPF's
    reward) and of speedup_n@k (paper §VI)."""
    return {lang: statistics.median(float(r["runtime_s"]) for r in rows) for lang, rows in by_language.items() if rows}


# The optional columns that say which clock measured a label (perfdata.perf; sandbox.clock).
CLOCK_COLUMNS = ("clock", "test_clock_counts")


def count_label(row: Mapping) -> float | None:
    """A label measured with a deterministic clock (instructions, cycles): the mean over its
    tests of the count, the unit its ``runtime_s`` (CPU time under valgrind) is not in."""
    counts = [float(c) for c in (row.get("test_clock_counts") or []) if c is not None]
    return sum(counts) / len(counts) if counts and (row.get("clock") or "cpu") != "cpu" else None


def language_clocks(by_language: Mapping[str, list[Mapping]]) -> dict[str, str]:
    """language -> the clock its labels were measured with (rows from before the column: cpu).
    A language whose labels mix clocks raises ValueError: a baseline never mixes units."""
    out = {}
    for lang, rows in by_language.items():
        seen = {r.get("clock") or "cpu" for r in rows}
        if len(seen) > 1:
            raise ValueError(f"the {lang} labels mix clocks ({', '.join(sorted(seen))}): a baseline needs one")
        if seen:
            out[lang] = seen.pop()
    return out


def language_count_medians(by_language: Mapping[str, list[Mapping]]) -> dict[str, float]:
    """language -> median count label (:func:`count_label`) of a language measured with a
    deterministic clock: the baseline of Eq. 4 under that clock."""
    out = {}
    for lang, rows in by_language.items():
        vals = [v for v in map(count_label, rows) if v is not None]
        if vals:
            out[lang] = statistics.median(vals)
    return out


# The optional column of native CPU times measured beside a count (perfdata.perf; absent in older folders).
NATIVE_COLUMN = "test_native_cpu_repeats_s"


def native_cpu_label(row: Mapping) -> tuple[float, float] | None:
    """(native CPU seconds, relative noise) of a counted label, by the sandbox's rule
    (sandbox.clock.native_cpu_s: the summed median of each test's native runs, the largest
    (max - min) / median); None without the column or a test without runs."""
    reps = row.get(NATIVE_COLUMN) or []
    if not reps or any(not r for r in reps):
        return None
    total, noise = native_cpu_s([SimpleNamespace(native_cpu_times_s=list(r)) for r in reps])
    return (total, noise) if total else None


def language_native_medians(by_language: Mapping[str, list[Mapping]]) -> dict[str, tuple[float, float]]:
    """language -> (median native CPU seconds, median noise) of its counted labels that carry
    them: the CPU time a counted reward's own must not contradict."""
    out = {}
    for lang, rows in by_language.items():
        vals = [v for v in map(native_cpu_label, rows) if v is not None]
        if vals:
            out[lang] = (statistics.median(t for t, _ in vals), statistics.median(n for _, n in vals))
    return out
