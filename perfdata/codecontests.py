"""Reading deepmind/code_contests rows: from the Hub (streaming, per split) or from local
Parquet / JSONL files in the same schema.

A malformed row never stops a build: it becomes an ``ErrorRecord`` with the reason.
Schema: ../shared/notes/codecontests-schema.md (one row per problem).
"""
from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from sandbox import Language, TestCase

HF_DATASET = "deepmind/code_contests"
SPLITS = ("train", "valid", "test")
DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_MB = 256


@dataclass(frozen=True)
class Submission:
    problem_id: str
    language_id: int
    solution: str
    is_correct: bool
    index: int  # position in the row's (incorrect_)solutions list

    @property
    def language(self) -> Language:
        return Language.from_codecontests(self.language_id)

    @property
    def content_hash(self) -> str:
        h = hashlib.sha256(f"{self.problem_id}\0{self.language_id}\0{int(self.is_correct)}\0".encode())
        h.update(self.solution.encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:24]


@dataclass
class Problem:
    problem_id: str
    name: str
    split: str
    description: str
    time_limit_s: float
    memory_limit_mb: int
    public_tests: list[TestCase]
    private_tests: list[TestCase]
    generated_tests: list[TestCase]
    submissions: list[Submission]
    source: int = 0
    difficulty: int = 0
    cf_rating: int = 0
    cf_tags: list[str] = field(default_factory=list)
    held_out: bool = False

    @property
    def tests(self) -> list[TestCase]:
        return self.public_tests + self.private_tests + self.generated_tests

    @property
    def content_hash(self) -> str:
        h = hashlib.sha256(self.problem_id.encode())
        for t in self.tests:
            h.update(t.input.encode("utf-8", "surrogatepass") + b"\0" + (t.expected or "").encode("utf-8", "surrogatepass"))
        h.update(f"{self.time_limit_s}\0{self.memory_limit_mb}".encode())
        return h.hexdigest()[:24]


@dataclass
class ErrorRecord:
    """A row that could not be used, with why; kept in the dataset's `errors` table."""

    source: str
    split: str
    row_index: int
    problem_name: str | None
    reason: str
    # which submission, when only one submission of an otherwise good row is bad
    submission_index: int | None = None


class MalformedRow(ValueError):
    pass


def _tests(row: dict, key: str) -> list[TestCase]:
    value = row.get(key)
    if value is None:
        return []
    if not isinstance(value, dict) or "input" not in value or "output" not in value:
        raise MalformedRow(f"{key}: expected {{input: [...], output: [...]}}")
    ins, outs = value["input"] or [], value["output"] or []
    if len(ins) != len(outs):
        raise MalformedRow(f"{key}: {len(ins)} inputs but {len(outs)} outputs")
    for i, (a, b) in enumerate(zip(ins, outs)):
        if not isinstance(a, str) or not isinstance(b, str):
            raise MalformedRow(f"{key}[{i}]: test input/output must be strings")
    return [TestCase(a, b) for a, b in zip(ins, outs)]


def _submissions(row: dict, key: str, problem_id: str, correct: bool, errors: list[tuple[int, str]]) -> list[Submission]:
    value = row.get(key)
    if value is None:
        return []
    if not isinstance(value, dict) or "language" not in value or "solution" not in value:
        raise MalformedRow(f"{key}: expected {{language: [...], solution: [...]}}")
    langs, sols = value["language"] or [], value["solution"] or []
    if len(langs) != len(sols):
        raise MalformedRow(f"{key}: {len(langs)} languages but {len(sols)} solutions")
    out = []
    for i, (lang, code) in enumerate(zip(langs, sols)):
        if isinstance(code, bytes):
            try:
                code = code.decode("utf-8")
            except UnicodeDecodeError as e:
                errors.append((i, f"{key}[{i}]: undecodable code ({e.reason} at byte {e.start})"))
                continue
        if not isinstance(code, str):
            errors.append((i, f"{key}[{i}]: solution is {type(code).__name__}, not text"))
            continue
        try:
            lang_id = int(lang)
        except (TypeError, ValueError):
            errors.append((i, f"{key}[{i}]: language id {lang!r} is not an integer"))
            continue
        out.append(Submission(problem_id, lang_id, code, correct, i))
    return out


def _time_limit(row: dict) -> float:
    tl = row.get("time_limit")
    if not tl:
        return DEFAULT_TIME_LIMIT_S
    secs = float(tl.get("seconds") or 0) + float(tl.get("nanos") or 0) / 1e9
    return secs if secs > 0 else DEFAULT_TIME_LIMIT_S


def parse_problem(row: dict, split: str, held_out: bool | None = None) -> tuple[Problem, list[tuple[int, str]]]:
    """A validated Problem, plus per-submission problems (index, reason) that were skipped.

    Raises MalformedRow when the row as a whole is unusable.
    """
    if not isinstance(row, dict):
        raise MalformedRow(f"row is {type(row).__name__}, not a mapping")
    name = row.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MalformedRow("missing field 'name'")
    description = row.get("description")
    if not isinstance(description, str):
        raise MalformedRow("missing field 'description'")
    public, private, generated = (_tests(row, k) for k in ("public_tests", "private_tests", "generated_tests"))
    if not (public or private or generated):
        raise MalformedRow("no tests (public_tests, private_tests and generated_tests are all empty)")
    sub_errors: list[tuple[int, str]] = []
    subs = _submissions(row, "solutions", name, True, sub_errors)
    subs += _submissions(row, "incorrect_solutions", name, False, sub_errors)
    mem = row.get("memory_limit_bytes") or 0
    return Problem(
        problem_id=name,
        name=name,
        split=split,
        description=description,
        time_limit_s=_time_limit(row),
        memory_limit_mb=int(mem) // (1024 * 1024) if mem else DEFAULT_MEMORY_MB,
        public_tests=public,
        private_tests=private,
        generated_tests=generated,
        submissions=subs,
        source=int(row.get("source") or 0),
        difficulty=int(row.get("difficulty") or 0),
        cf_rating=int(row.get("cf_rating") or 0),
        cf_tags=list(row.get("cf_tags") or []),
        held_out=(split == "test") if held_out is None else held_out,
    ), sub_errors


# --------------------------------------------------------------------------- sources
def iter_rows(source: str) -> Iterator[tuple[str, int, Any]]:
    """Raw rows ``(split, row_index, row)`` from ``hf:NAME[:split]`` or a local path.

    A local path may be a file (.parquet, .jsonl, .jsonl.gz, .json) or a directory of them;
    the split is read from the file name (``train-00000-of-00001.parquet``, ``valid.jsonl``)
    and defaults to ``train``.
    """
    if source.startswith("hf:"):
        yield from _iter_hub(source[3:])
        return
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"source {source!r} does not exist (expected hf:NAME[:split] or a path)")
    files = sorted(p for p in path.rglob("*") if _is_data_file(p)) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no .parquet/.jsonl/.json files under {source!r}")
    for f in files:
        split = _split_of(f)
        for i, row in enumerate(_iter_file(f)):
            yield split, i, row


def _iter_hub(spec: str) -> Iterator[tuple[str, int, Any]]:
    import datasets  # the real loader; streaming so a 4.5M-submission build never holds it all

    name, _, split = spec.partition(":")
    for sp in ([split] if split else list(SPLITS)):
        ds = datasets.load_dataset(name or HF_DATASET, split=sp, streaming=True)
        for i, row in enumerate(ds):
            yield sp, i, row


def _is_data_file(p: Path) -> bool:
    n = p.name
    return p.is_file() and (n.endswith(".parquet") or n.endswith(".jsonl") or n.endswith(".jsonl.gz") or n.endswith(".json"))


def _split_of(p: Path) -> str:
    stem = p.name.split(".")[0].split("-")[0].lower()
    return stem if stem in SPLITS else "train"


def _iter_file(f: Path) -> Iterator[Any]:
    if f.name.endswith(".parquet"):
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(f)
        for batch in pf.iter_batches(batch_size=16):
            yield from batch.to_pylist()
        return
    opener = gzip.open if f.name.endswith(".gz") else open
    with opener(f, "rt", encoding="utf-8", errors="surrogateescape") as fh:
        if f.name.endswith(".json"):
            data = json.load(fh)
            yield from (data if isinstance(data, list) else [data])
            return
        for line in fh:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as e:
                yield _BadJson(str(e))


class _BadJson:
    """Placeholder for an unparsable JSONL line, so it turns into an error record."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def iter_problems(source: str, limit: int | None = None) -> Iterator[Problem | ErrorRecord]:
    """Validated problems and error records (never raises for a bad row)."""
    count = 0
    for split, i, row in iter_rows(source):
        if limit is not None and count >= limit:
            return
        count += 1
        if isinstance(row, _BadJson):
            yield ErrorRecord(source, split, i, None, f"invalid JSON: {row.reason}")
            continue
        name = row.get("name") if isinstance(row, dict) else None
        try:
            problem, sub_errors = parse_problem(row, split)
        except MalformedRow as e:
            yield ErrorRecord(source, split, i, name if isinstance(name, str) else None, str(e))
            continue
        for idx, reason in sub_errors:
            yield ErrorRecord(source, split, i, problem.name, reason, submission_index=idx)
        yield problem
