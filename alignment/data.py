"""Reading the stage inputs (perfdata.triplets outputs and CodeContests-Perf) with the checks
that turn bad inputs into clear errors before any training starts."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

import pyarrow as pa

from perfalign.common.equations import adaptive_margin
from perfalign.common.prompts import format_response
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.shards import load_table
from perfalign.perfdata.submissions import (
    CLOCK_COLUMNS,
    MEASURED_COLUMNS,
    NATIVE_COLUMN,
    language_clocks,
    language_count_medians,
    language_medians,
    language_native_medians,
    measured_by_problem,
)
from perfalign.perfdata.triplets import SFT_SCHEMA, TRIPLET_SCHEMA

SFT_REQUIRED = ("prompt", "completion", "split")
TRIPLET_REQUIRED = ("triplet_id", "problem_id", "source", "language", "prompt", "fast", "slow",
                    "fast_runtime_s", "slow_runtime_s", "slow_is_correct", "margin", "split")
assert set(SFT_REQUIRED) <= set(SFT_SCHEMA.names) and set(TRIPLET_REQUIRED) <= set(TRIPLET_SCHEMA.names)


def load_sft_rows(path: str | Path, split: str, limit: int | None = None) -> list[dict]:
    """Rows of the sft_prompts table in ``split`` ("train" / "eval")."""
    rows = [r for r in load_table(path, "sft_prompts", SFT_REQUIRED).to_pylist() if r["split"] == split]
    if not rows:
        raise ValueError(f"the {split!r} split of the sft_prompts table under {path} is empty")
    return rows[:limit]


def load_triplet_rows(path: str | Path, splits: tuple[str, ...], limit: int | None = None,
                      what: str = "stage") -> list[dict]:
    """Rows of the triplets table whose split is in ``splits``."""
    rows = [r for r in load_table(path, "triplets", TRIPLET_REQUIRED).to_pylist() if r["split"] in splits]
    if not rows:
        raise ValueError(f"{what}: no triplets in splits {list(splits)} under {path}")
    for r in rows:
        if not (r["prompt"] and r["fast"] and r["slow"]):
            raise ValueError(f"{what}: triplet {r['triplet_id']} has an empty prompt, fast or slow solution")
    return rows[:limit]


# CodeContests-Perf's default ``perf.repeats``: what a problem without that column was measured with.
DATASET_REPEATS = BuildSettings.repeats
# how the labels were measured (optional)
_LABEL_COLUMNS = ("repeats", "host", "calibration_cpu_s", *CLOCK_COLUMNS, NATIVE_COLUMN)


@dataclass
class RewardProblem:
    """What Eq. 4 needs to execute code for one problem: its tests, limits, the median runtime
    of the dataset's correct submissions per language, and how those runtimes were measured
    (repeats per test, hosts, the hosts' calibration figure), so a reward is measured the same way."""

    problem_id: str
    inputs: list[str]
    outputs: list[str]
    time_limit_s: float
    memory_limit_mb: int
    median_runtime_s: dict[str, float]
    repeats: int = DATASET_REPEATS
    hosts: frozenset[str] = frozenset()
    calibration_cpu_s: float | None = None
    # language -> the clock of its labels (sandbox.clock; cpu for a dataset from before the column),
    # and for a deterministic clock the median count (mean over tests): the baseline in that unit
    label_clocks: dict[str, str] = field(default_factory=dict)
    median_count: dict[str, float] = field(default_factory=dict)
    # language -> (median native CPU seconds, noise) measured beside the counts (absent in folders
    # from before the column: the count is then not checked against the CPU time)
    native_cpu: dict[str, tuple[float, float]] = field(default_factory=dict)


def load_contest_problems(codecontests_dir: str | Path | list,
                          problem_ids: set[str] | None = None) -> dict[str, RewardProblem]:
    """Problems with tests from CodeContests-Perf (one folder or several, e.g. the dataset and the
    controlled task), with per-language medians over the correct, measured submissions
    (perfdata.submissions) and their measurement settings."""
    dirs = [codecontests_dir] if isinstance(codecontests_dir, (str, Path)) else list(codecontests_dir)
    probs = [r for d in dirs for r in load_table(d, "problems", ("problem_id", "test_inputs", "test_outputs",
                                                                  "time_limit_s", "memory_limit_mb")).to_pylist()]
    subs = pa.concat_tables([load_table(d, "submissions", MEASURED_COLUMNS) for d in dirs],
                            promote_options="default")
    cols = list(MEASURED_COLUMNS) + [c for c in _LABEL_COLUMNS if c in subs.column_names]
    measured = measured_by_problem(s for s in subs.select(cols).to_pylist()
                                   if problem_ids is None or s["problem_id"] in problem_ids)
    out = {}
    for p in probs:
        pid = p["problem_id"]
        if problem_ids is not None and pid not in problem_ids:
            continue
        ins, outs = list(p["test_inputs"] or []), list(p["test_outputs"] or [])
        if len(ins) != len(outs):
            raise ValueError(f"problem {pid}: {len(ins)} test inputs but {len(outs)} outputs")
        by_language = measured.get(pid, {})
        used = [s for rows in by_language.values() for s in rows]
        reps = [s["repeats"] for s in used if s.get("repeats")]
        cals = [s["calibration_cpu_s"] for s in used if s.get("calibration_cpu_s")]
        try:
            clocks = language_clocks(by_language)
        except ValueError as e:
            raise ValueError(f"problem {pid}: {e}") from None
        out[pid] = RewardProblem(pid, ins, outs, float(p["time_limit_s"] or 2.0), int(p["memory_limit_mb"] or 256),
                                  language_medians(by_language),
                                  repeats=int(median(reps)) if reps else DATASET_REPEATS,
                                  hosts=frozenset(s["host"] for s in used if s.get("host")),
                                  calibration_cpu_s=median(cals) if cals else None,
                                  label_clocks=clocks, median_count=language_count_medians(by_language),
                                  native_cpu=language_native_medians(by_language))
    return out


def preference_rows(rows: list[dict], max_margin: float, use_margin: bool = True) -> list[dict]:
    """prompt / chosen (fast) / rejected (slow) / margin (Eq. 3) records from triplets."""
    out = []
    for r in rows:
        mu = adaptive_margin(r["fast_runtime_s"], r["slow_runtime_s"], is_contest=r["source"] == "contest",
                             slow_is_correct=r["slow_is_correct"], max_margin=max_margin) if use_margin else 0.0
        out.append({"prompt": r["prompt"], "chosen": format_response(r["fast"], r["language"]),
                    "rejected": format_response(r["slow"], r["language"]), "margin": mu})
    return out


def preference_splits(cfg, what: str) -> tuple[list[dict], list[dict]]:
    """Train and eval preference records of a stage config (reward model, DPA)."""
    def load(splits, limit, part):
        rows = load_triplet_rows(cfg.data_path, tuple(splits), limit, f"{what} {part}")
        return preference_rows(rows, cfg.max_margin, cfg.use_margin)

    return (load(cfg.train_splits, cfg.max_train_samples, "train"),
            load(cfg.eval_splits, cfg.max_eval_samples, "eval"))
