"""The table I/O module: every Parquet file perfalign reads or writes goes through here.

A table is the union of ``data/<table>-<split>-<id>.parquet`` files (shards) in a dataset folder.

A shard is written to a hidden temp file and renamed into place, so a crash (kill -9 at any
moment) leaves either the whole shard or nothing; readers ignore leftovers. A shard that is
corrupt anyway (a truncated copy, a full disk, a bad sector) is moved to ``quarantine/`` at
start-up instead of failing every later read; the build then re-measures what it held.
The split in the name lets the dataset card map CodeContests' splits to the dataset's splits.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from perfalign.common.fileio import atomic_write

QUARANTINE = "quarantine"
_SPLIT_OK = re.compile(r"[A-Za-z0-9_]+")


def clean_split(split: str) -> str:
    """A split name usable in a file name and as a Hugging Face split (``\\w+``)."""
    return split if _SPLIT_OK.fullmatch(split or "") else (re.sub(r"\W+", "_", split or "").strip("_") or "train")


def split_of(path: Path, table: str) -> str | None:
    """The split in a shard's name; None for a shard named before splits were (legacy)."""
    parts = path.name[len(table) + 1:-len(".parquet")].split("-")
    return parts[0] if len(parts) == 2 else None


def write_shard(out_dir: Path, table: str, shard_id: str, rows: list[dict] | pa.Table, schema: pa.Schema,
                split: str, plain: tuple[str, ...] = ()) -> Path | None:
    """Write rows (dicts, or an Arrow table already in ``schema``) as one shard, atomically.

    ``plain``: columns of large, unique values (multi-MB test data) written without dictionary
    encoding, which costs the reader several times their size in memory and saves nothing."""
    if not len(rows):
        return None
    data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema=schema)
    final = Path(out_dir) / "data" / f"{table}-{split}-{shard_id}.parquet"
    dictionary = [f"{f.name}.list.element" if pa.types.is_list(f.type) else f.name  # Parquet leaf paths
                  for f in schema if f.name not in plain] if plain else True
    return write_parquet(final, data, compression="zstd", use_dictionary=dictionary)


def shard_files(out_dir: Path, table: str) -> list[Path]:
    return sorted((Path(out_dir) / "data").glob(f"{table}-*.parquet"))


def read_table(out_dir: Path, table: str, schema: pa.Schema, columns: Iterable[str] | None = None) -> pa.Table:
    """A table this package writes (``schema`` known; empty when no shard exists yet)."""
    files = shard_files(out_dir, table)
    cols = list(columns) if columns is not None else None
    if not files:
        s = schema if cols is None else pa.schema([schema.field(c) for c in cols])
        return s.empty_table()
    return pa.concat_tables([pq.read_table(f, columns=cols, schema=schema if cols is None else None) for f in files])


def iter_shards(out_dir: Path, table: str, columns: Iterable[str] | None = None) -> Iterator[tuple[Path, pa.Table]]:
    """(shard file, its ``columns``) for each shard of ``table``."""
    cols = list(columns) if columns is not None else None
    for f in shard_files(out_dir, table):
        yield f, pq.read_table(f, columns=cols)


def read_column(out_dir: Path, table: str, column: str) -> set:
    return {v for _, t in iter_shards(out_dir, table, [column]) for v in t.column(column).to_pylist()}


def read_schema(path: Path) -> pa.Schema:
    return pq.read_schema(path)


def write_parquet(path: Path, data: pa.Table, **options) -> Path:
    """One Parquet file, written atomically (``options``: ``pyarrow.parquet.write_table``'s)."""
    return atomic_write(path, lambda tmp: pq.write_table(data, tmp, **options))


def read_parquet(path: Path, columns: Iterable[str] | None = None) -> pa.Table:
    return pq.read_table(path, columns=list(columns) if columns is not None else None)


# ------------------------------------------------------------------ dataset folders (any writer)
def dataset_files(path: str | Path, name: str) -> list[Path]:
    """Parquet files of table ``name`` in a dataset folder: ``DIR/data/<name>-*.parquet`` (shards)
    and ``DIR/data/<name>.parquet`` (perfdata.synth's single file), else ``DIR/<name>-*.parquet``
    (the data folder itself); ``path`` itself when it is a Parquet file."""
    p = Path(path)
    if p.is_file():
        return [p]
    single = p / "data" / f"{name}.parquet"
    files = shard_files(p, name) + ([single] if single.is_file() else []) or sorted(p.glob(f"{name}-*.parquet"))
    if not files:
        raise FileNotFoundError(f"no table {name!r} under {p} (no {name} table at {p}/data/{name}-*.parquet: "
                                "a folder written by `perfalign perf build` or `perfalign triplets`)")
    return files


def load_table(path: str | Path, name: str, required: Iterable[str] = ()) -> pa.Table:
    """Table ``name`` of a dataset folder (see :func:`dataset_files`), its shards' schemas
    merged; a clear error when it is absent or lacks a ``required`` column."""
    table = pa.concat_tables([pq.read_table(f) for f in dataset_files(path, name)], promote_options="default")
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise ValueError(f"table {name!r} under {path} lacks columns {missing} (has {table.column_names})")
    return table


def read_rows(path: str | Path, name: str, columns: Iterable[str]) -> list[dict]:
    """The ``columns`` of table ``name`` of a dataset folder, as row dicts."""
    cols = list(columns)
    return load_table(path, name, cols).select(cols).to_pylist()


def clean_temp(out_dir: Path) -> None:
    """Remove temp files left by a crashed writer."""
    for p in (Path(out_dir) / "data").glob(".*.tmp"):
        p.unlink(missing_ok=True)


def quarantine_corrupt(out_dir: Path, table: str, columns: list[str]) -> list[str]:
    """Move shards whose footer or ``columns`` cannot be read to ``out_dir/quarantine/``.

    Returns one message per moved shard. Reading the key columns is what every (re)start
    needs anyway, so this costs next to nothing; a shard corrupt only in another column
    is found by the reader of that column.
    """
    msgs = []
    for f in shard_files(out_dir, table):
        try:
            pq.read_table(f, columns=columns)
        except Exception as e:  # noqa: BLE001 - whatever pyarrow raises, the file is unusable
            msgs.append(quarantine(out_dir, f, e))
    return msgs


def quarantine(out_dir: Path, f: Path, error: BaseException) -> str:
    """Move an unreadable shard to ``out_dir/quarantine/``; returns the one-line message."""
    dest = Path(out_dir) / QUARANTINE / f"{f.name}.{_dt.datetime.now():%Y%m%dT%H%M%S%f}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(f, dest)
    why = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
    return f"corrupt shard {f.name} moved to {dest.relative_to(out_dir)} ({why}); its rows will be rebuilt"


def iter_row_groups(path: Path) -> Iterator[pa.Table]:
    """A Parquet file one row group at a time (pyarrow decodes nested columns a whole row group
    at once); no pre-buffering, so only the decoded group is held (the caller drops it before
    asking for the next)."""
    pf = pq.ParquetFile(path, pre_buffer=False)
    for i in range(pf.num_row_groups):
        yield pf.read_row_group(i, use_threads=False)


def rewrite_shard(path: Path, schema: pa.Schema, transform: Callable[[pa.Table], pa.Table]) -> int:
    """Rewrite a shard in place (atomically, one row group at a time) through ``transform``;
    a shard left empty is removed. Returns the rows kept."""
    kept = 0

    def write(tmp: Path) -> None:
        nonlocal kept
        with pq.ParquetWriter(tmp, schema, compression="zstd") as w:
            for t in iter_row_groups(path):
                t = transform(t)
                kept += t.num_rows
                if t.num_rows:
                    w.write_table(t)

    atomic_write(path, write)
    if not kept:
        path.unlink()
    return kept


class OutputLocked(RuntimeError):
    """Another build is writing to the same output folder."""


class BuildLock:
    """An exclusive lock on an output folder for one build (released when the process dies).

    flock, not filelock: the lock file must stay after release, since perfdata.codecontests
    recognises an output folder by it."""

    def __init__(self, out_dir: Path, name: str = ".build.lock", holder: str = "another build") -> None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        self._f = open(Path(out_dir) / name, "w")
        try:
            fcntl.flock(self._f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._f.close()
            raise OutputLocked(f"{out_dir}: {holder} is writing here (lock {out_dir}/{name})") from None

    def release(self) -> None:
        if not self._f.closed:
            fcntl.flock(self._f, fcntl.LOCK_UN)
            self._f.close()
