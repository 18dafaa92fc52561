"""CodeContests-Perf's build summary (counts per split, status, language, reject cause, slow
tail, malformed records) and the Markdown the dataset card ends with (``perf.finalize`` writes it)."""
from __future__ import annotations

import collections
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from . import shards
from .codecontests import parse_hub_source
from .schema import TIMING_CAUSES, arrow_schema


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
    by_split: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> status -> n
    reject_causes: dict[str, int] = field(default_factory=dict)
    remeasured: int = 0
    # correct-labelled submissions slower than their problem's limit here, per language:
    # past_limit (labelled, flagged) and past_cap (`time` rejects); the cap they ran under
    slow_tail: dict[str, dict[str, int]] = field(default_factory=dict)
    limit_cap: float | None = None
    # correct-labelled submissions whose language cannot run here, and why
    unsupported_share: float = 0.0
    unsupported_reasons: dict[str, int] = field(default_factory=dict)
    quarantined: list[str] = field(default_factory=list)
    # malformed records grouped by reason, most frequent first: {reason, count, example}
    error_reasons: list[dict] = field(default_factory=list)
    unreadable_files: list[str] = field(default_factory=list)  # "file: reason" (allow_partial builds)

    def to_dict(self) -> dict:
        return asdict(self)


def error_lines(error_reasons: list[dict], unreadable_files: list[str], limit: int = 5) -> list[str]:
    """The malformed records for a reader (terminal, Prefect run log, dataset card): the
    skipped files first, then the first ``limit`` reasons grouped with their counts."""
    lines = [f"SKIPPED source file (--allow-partial): {f}" for f in unreadable_files]
    for g in error_reasons[:limit]:
        lines.append(f"{g['count']} x {_md(g['reason'])} (e.g. {g['example']})")
    if len(error_reasons) > limit:
        rest = sum(g["count"] for g in error_reasons[limit:])
        lines.append(f"... {rest} more in {len(error_reasons) - limit} other reasons (table `errors`)")
    return lines


def _error_groups(errs: pa.Table) -> tuple[list[dict], list[str]]:
    groups: dict[str, dict] = {}
    files = []
    for source, row, name, reason in zip(*(errs.column(c).to_pylist() for c in
                                           ("source", "row_index", "problem_name", "reason"))):
        if row < 0 and name is None:  # a whole file: listed as skipped, not among the rows' reasons
            files.append(f"{source}: {reason}")
            continue
        g = groups.setdefault(reason, {"reason": reason, "count": 0,
                                       "example": source if row < 0 else f"{source} row {row}"})
        g["count"] += 1
    return sorted(groups.values(), key=lambda g: (-g["count"], g["reason"])), sorted(files)


def summarize(out_dir: Path) -> BuildSummary:
    probs = shards.read_table(out_dir, "problems", arrow_schema("problems"), ["problem_id", "held_out"])
    subs = shards.read_table(out_dir, "submissions", arrow_schema("submissions"),
                             ["status", "language", "split", "is_correct", "reject_cause", "remeasured",
                              "compile_message", "test_cpu_repeats_s", "past_limit", "limit_cap"])
    errs = shards.read_table(out_dir, "errors", arrow_schema("errors"),
                             ["source", "row_index", "problem_name", "reason"])
    col = {c: subs.column(c).to_pylist()
           for c in ("status", "language", "split", "is_correct", "reject_cause", "remeasured", "past_limit")}
    status = collections.Counter(col["status"])
    by_lang: dict[str, dict[str, int]] = {}
    by_split: dict[str, dict[str, int]] = {}
    for st, lang, split in zip(col["status"], col["language"], col["split"]):
        for d in (by_lang.setdefault(lang, {}), by_split.setdefault(split, {})):
            d[st] = d.get(st, 0) + 1
    unsupported = subs.filter(pc.equal(subs.column("status"), "unsupported"))
    reasons = collections.Counter(f"{lang}: {msg or 'unsupported'}" for lang, msg in zip(
        unsupported.column("language").to_pylist(), unsupported.column("compile_message").to_pylist()))
    correct = sum(bool(c) for c in col["is_correct"])
    execs = sum(sum(len(r) for r in (reps or [])) for reps in subs.column("test_cpu_repeats_s").to_pylist())
    ids = probs.column("problem_id").to_pylist()
    error_reasons, unreadable_files = _error_groups(errs)
    return BuildSummary(
        problems=len(set(ids)),
        held_out_problems=len({p for p, h in zip(ids, probs.column("held_out").to_pylist()) if h}),
        errors=errs.num_rows,
        submissions=subs.num_rows,
        status=dict(status),
        by_language=by_lang,
        test_executions=execs,
        by_split=by_split,
        reject_causes=dict(collections.Counter(c for c in col["reject_cause"] if c)),
        remeasured=sum(bool(r) for r in col["remeasured"]),
        slow_tail=_slow_tail(col),
        limit_cap=pc.max(subs.column("limit_cap")).as_py() if subs.num_rows else None,
        unsupported_share=round(status.get("unsupported", 0) / correct, 4) if correct else 0.0,
        unsupported_reasons=dict(reasons),
        error_reasons=error_reasons,
        unreadable_files=unreadable_files,
    )


def _slow_tail(col: dict[str, list]) -> dict[str, dict[str, int]]:
    """Per language: correct-labelled submissions labelled past their limit, and past the cap."""
    tail: dict[str, dict[str, int]] = {}
    for lang, past, st, cause in zip(col["language"], col["past_limit"], col["status"], col["reject_cause"]):
        kind = "past_limit" if past else "past_cap" if st == "rejected" and cause in TIMING_CAUSES else None
        if kind:
            counts = tail.setdefault(lang, {"past_limit": 0, "past_cap": 0})
            counts[kind] += 1
    return tail


def describe_source(source: str, out_dir: Path) -> str:
    """The source as a reader of the card can find it: the Hub dataset and revision, or a path
    relative to the card (never this machine's absolute path)."""
    if source.startswith("hf:"):
        name, revision, split = parse_hub_source(source[3:])
        revision = revision or _hub_revision(name)
        return (f"[`{name}`](https://huggingface.co/datasets/{name})"
                + (f" at revision `{revision}`" if revision else " (latest revision at build time)")
                + (f", split `{split}`" if split else ""))
    src, card = Path(source).resolve(), Path(out_dir).resolve()
    if os.path.commonpath([src, card]) != src.anchor:
        where = f"`{Path(os.path.relpath(src, card)).as_posix()}` (relative to this card)"
    else:  # nothing in common but the root: a relative path would spell out this machine's layout
        where = f"`{'/'.join(src.parts[-2:])}` (a local copy)"
    return f"local files in the CodeContests schema, {where}"


def _hub_revision(name: str) -> str | None:
    try:
        from huggingface_hub import HfApi

        return HfApi().dataset_info(name, timeout=10).sha
    except Exception:  # noqa: BLE001 - offline or unreachable: the card says "latest"
        return None


def split_globs(out_dir: Path, table: str) -> dict[str, str]:
    splits = sorted({shards.split_of(f, table) for f in shards.shard_files(out_dir, table)} - {None},
                    key=lambda s: (SPLIT_ORDER.get(s, 9), s))
    return {s: f"{table}/{s}-*.parquet" for s in splits}


SPLIT_ORDER = {"train": 0, "valid": 1, "test": 2}


def summary_markdown(s: BuildSummary) -> str:
    lines = ["## Build summary", "",
             f"{s.problems} problems ({s.held_out_problems} held out), {s.submissions} submissions, "
             f"{s.errors} malformed source rows/items (table `errors`).", "",
             *([f"**Partial build** (`--allow-partial`): {len(s.unreadable_files)} source file(s) could not be read "
                "to the end; their rows from the damage on (all of them when it shows at opening) are missing "
                "from every table.", ""] if s.unreadable_files else []),
             *([f"- {line}" for line in error_lines(s.error_reasons, s.unreadable_files)] + [""] if s.errors else []),
             "| split | measured | rejected | unsupported | not run (incorrect) |", "|---|---|---|---|---|"]
    for split in sorted(s.by_split, key=lambda x: (SPLIT_ORDER.get(x, 9), x)):
        counts = (s.by_split[split].get(k, 0) for k in ("measured", "rejected", "unsupported", "not_run"))
        lines.append(f"| {split} | {' | '.join(map(str, counts))} |")
    lines += ["", f"**Unsupported languages**: {s.unsupported_share:.1%} of the submissions labelled correct could "
                  "not be run here and have no runtime (status `unsupported`)."]
    lines += [f"- {n} x {_md(r)}" for r, n in sorted(s.unsupported_reasons.items(), key=lambda kv: -kv[1])[:10]]
    lines += _slow_tail_markdown(s)
    if s.reject_causes:
        lines += ["", "**Reject causes**: " + ", ".join(f"{c} {n}" for c, n in sorted(s.reject_causes.items())) + "."]
    return "\n".join(lines) + "\n"


def _slow_tail_markdown(s: BuildSummary) -> list[str]:
    past = sum(c["past_limit"] for c in s.slow_tail.values())
    capped = sum(c["past_cap"] for c in s.slow_tail.values())
    cap = f"{s.limit_cap:g}x" if s.limit_cap else "a multiple of"
    lines = ["", f"**Past the time limit**: of the submissions labelled correct, {past} ran longer than their "
                 f"problem's time limit on this host and are labelled with their measured runtime all the same "
                 f"(`past_limit`); {capped} ran past the cap ({cap} the limit) and are rejects with cause `time`."]
    if s.slow_tail:
        lines += ["", "| language | past the limit (labelled) | past the cap (rejected) |", "|---|---|---|"]
        lines += [f"| {lang} | {c['past_limit']} | {c['past_cap']} |" for lang, c in sorted(s.slow_tail.items())]
    return lines


def _md(text: str) -> str:
    return str(text).replace("\n", " ")[:200]
