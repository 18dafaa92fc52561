"""The shapes CodeContests-Perf's reader and builder share: a problem, its tests (Arrow arrays, or
spooled to disk for a batch), a submission, and a row that could not be used.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from perfalign.sandbox import Language, TestCase

_NON_UTF8 = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Submission:
    problem_id: str
    language_id: int
    # Text; bytes that are not UTF-8 are kept as surrogate escapes (see ``raw_bytes``).
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

    @property
    def raw_bytes(self) -> bytes:
        """The source exactly as it came (what the sandbox compiles)."""
        return self.solution.encode("utf-8", "surrogateescape")

    @property
    def is_utf8(self) -> bool:
        return not _NON_UTF8.search(self.solution)  # a surrogate escape is a byte that is not UTF-8

    @property
    def text(self) -> str:
        """Valid UTF-8 for the `solution` column: undecodable bytes shown as U+FFFD."""
        return self.solution if self.is_utf8 else self.raw_bytes.decode("utf-8", "replace")


class Tests(Sequence):
    """A problem's tests as Arrow string arrays, materialized one ``TestCase`` at a time.

    Slicing and concatenation are zero-copy; nothing here holds every test as Python strings.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, inputs: pa.ChunkedArray, outputs: pa.ChunkedArray) -> None:
        if len(inputs) != len(outputs):
            raise ValueError(f"{len(inputs)} inputs but {len(outputs)} outputs")
        self.inputs, self.outputs = inputs, outputs

    @classmethod
    def of(cls, inputs: list[str], outputs: list[str]) -> "Tests":
        return cls(pa.chunked_array([pa.array(inputs, pa.string())]),
                   pa.chunked_array([pa.array(outputs, pa.string())]))

    @classmethod
    def concat(cls, parts: Sequence["Tests"]) -> "Tests":
        ins = [c for p in parts for c in p.inputs.chunks]
        outs = [c for p in parts for c in p.outputs.chunks]
        return cls(pa.chunked_array(ins, pa.string()), pa.chunked_array(outs, pa.string()))

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise ValueError("Tests supports contiguous slices only")
            n = max(0, stop - start)
            return Tests(self.inputs.slice(start, n), self.outputs.slice(start, n))
        if i < 0:
            i += len(self)
        return TestCase(self.inputs[i].as_py(), self.outputs[i].as_py())

    def iter_buffers(self) -> Iterator[tuple[memoryview, memoryview]]:
        """(input, expected output) UTF-8 bytes per test, zero-copy views into the arrays."""
        for a, b in zip(self.inputs, self.outputs):
            yield memoryview(a.as_buffer()), memoryview(b.as_buffer())

    def spool(self, directory: Path) -> "SpooledTests":
        """Write every test to ``directory`` (one file per input / output), for batches."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for i, (a, b) in enumerate(self.iter_buffers()):
            (directory / f"{i}.in").write_bytes(a)
            (directory / f"{i}.out").write_bytes(b)
        return SpooledTests(str(directory), len(self))


@dataclass(frozen=True)
class SpooledTests(Sequence):
    """Tests on disk: what a batch carries (a path, not gigabytes), read one test at a time.

    Picklable and small, so Prefect and Dask move batches cheaply; the folder must be on a
    file system every worker sees (it lives under the build's output folder)."""

    directory: str
    n: int

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return _SpooledTest(self.directory, i % self.n)

    def link_copy(self, directory: Path) -> "SpooledTests":
        """The same tests in ``directory`` as hard links (no bytes copied)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for i in range(self.n):
            for ext in ("in", "out"):
                src, dst = Path(self.directory) / f"{i}.{ext}", directory / f"{i}.{ext}"
                try:
                    os.link(src, dst)
                except OSError:  # a file system without hard links
                    shutil.copyfile(src, dst)
        return SpooledTests(str(directory), self.n)

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class _SpooledTest(TestCase):
    """A TestCase that reads its input and expected output from disk each time they are used,
    so whoever keeps TestCase objects (e.g. one judge per test for a whole job) keeps paths,
    not hundreds of MB."""

    def __init__(self, directory: str, index: int) -> None:
        object.__setattr__(self, "_where", (directory, index))

    def _read(self, ext: str) -> str:
        d, i = self._where
        return (Path(d) / f"{i}.{ext}").read_text("utf-8", "surrogateescape")

    @property
    def input(self) -> str:  # type: ignore[override]
        return self._read("in")

    @property
    def expected(self) -> str:  # type: ignore[override]
        return self._read("out")

    def __repr__(self) -> str:
        return f"_SpooledTest({self._where[0]!r}, {self._where[1]})"


@dataclass
class Problem:
    problem_id: str
    name: str
    split: str
    description: str
    time_limit_s: float
    memory_limit_mb: int
    public_tests: Tests
    private_tests: Tests
    generated_tests: Tests
    submissions: list[Submission]
    source: int = 0
    difficulty: int = 0
    cf_rating: int = 0
    cf_tags: list[str] = field(default_factory=list)
    held_out: bool = False
    origin: str = ""  # its source file, relative to the source (ErrorRecord.source)

    @property
    def tests(self) -> Tests:
        return Tests.concat([self.public_tests, self.private_tests, self.generated_tests])

    @functools.cached_property
    def content_hash(self) -> str:
        h = hashlib.sha256(self.problem_id.encode())
        for a, b in self.tests.iter_buffers():
            h.update(a)
            h.update(b"\0")
            h.update(b)
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
    unreadable_file: bool = False  # the whole file `source` could not be read (its rows are missing)
