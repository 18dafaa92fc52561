"""Which CodeContests-Perf submissions carry a runtime label, and the per-language median of
those labels: one rule for the triplets' pairs (perfdata.triplets), RLPF's reward baseline
(alignment.data, Eq. 4) and the evaluation's contest baseline (evaluation.tasks.codecontests,
evaluation.contest_score)."""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Iterable, Mapping

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
