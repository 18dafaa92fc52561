"""The table I/O module: every Parquet file perfalign reads or writes goes through here.

A table is the union of the Parquet files (shards) in its own directory at the root of a dataset
folder, beside the card: ``<table>/<split>-<id>.parquet``. So ``pandas.read_parquet(<folder>/<table>)``
and the card's configs give exactly one table, and ``pandas.read_parquet(<folder>)`` fails (README.md
is not Parquet) instead of mixing tables; a build puts a placeholder card there before its first
shard, so this holds while it runs and after it is cut short (:func:`prepare_folder`). Folders written
in the older layouts (``data/<table>/`` and the flat ``data/<table>-*.parquet``) are read as they are
and moved into this one by the next build (:func:`migrate_layout`).

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

from perfalign.common.fileio import atomic_write, atomic_write_text

QUARANTINE = "quarantine"
_SPLIT_OK = re.compile(r"[A-Za-z0-9_]+")


def clean_split(split: str) -> str:
    """A split name usable in a file name and as a Hugging Face split (``\\w+``)."""
    return split if _SPLIT_OK.fullmatch(split or "") else (re.sub(r"\W+", "_", split or "").strip("_") or "train")


LEGACY = "data"  # the older layouts' folder: data/<table>/ and the flat data/<table>-*.parquet


def table_dir(out_dir: Path, table: str) -> Path:
    """The directory of ``table``'s shards in a dataset folder."""
    return Path(out_dir) / table


def _flat_rest(path: Path, table: str) -> str | None:
    """A flat-layout file's name after ``<table>-`` (``<table>.parquet``: the table's name)."""
    if path.name == f"{table}.parquet":
        return table
    prefix = f"{table}-"
    return path.name[len(prefix):-len(".parquet")] if path.name.startswith(prefix) else None


def _stem(path: Path, table: str) -> str:
    return path.name[:-len(".parquet")] if path.parent.name == table else _flat_rest(path, table) or ""


def split_of(path: Path, table: str) -> str | None:
    """The split in a shard's name; None for a shard named before splits were (legacy)."""
    parts = _stem(path, table).split("-")
    return parts[0] if len(parts) == 2 else None


def shard_id(path: Path, table: str) -> str:
    """The id in a shard's name (``<split>-<id>``, or ``<id>`` for a legacy shard)."""
    return _stem(path, table).rsplit("-", 1)[-1]


def _legacy_moves(out_dir: Path) -> Iterator[tuple[Path, Path]]:
    """(file in an older layout, its place in this one): ``data/<table>/<name>.parquet`` and
    ``data/<table>-<rest>.parquet`` go to ``<table>/``; a hidden file of ``data/`` (a journal) to the
    folder's root."""
    data = Path(out_dir) / LEGACY
    for f in sorted(data.iterdir()) if data.is_dir() else []:
        if f.is_dir():
            yield from ((g, table_dir(out_dir, f.name) / g.name) for g in sorted(f.glob("*.parquet")))
        elif f.name.endswith(".parquet") and not f.name.startswith("."):
            table = f.name[:-len(".parquet")].split("-", 1)[0]
            yield f, table_dir(out_dir, table) / f"{_flat_rest(f, table)}.parquet"
        elif f.name.startswith(".") and not f.name.endswith((".tmp", ".lock")):
            yield f, Path(out_dir) / f.name


def migrate_layout(out_dir: Path) -> list[Path]:
    """Move an older layout's files (see :func:`_legacy_moves`) into this one and remove the
    emptied ``data/``. Each move is one rename, so a crash leaves every file whole in one place or
    the other (readers see both) and the next call finishes; nothing is rewritten or dropped, and a
    file whose new place is taken stops the move with a clear error. Returns the new paths."""
    moved = []
    for src, dest in list(_legacy_moves(out_dir)):
        if dest.exists():
            raise FileExistsError(f"{src} and {dest} both exist: remove the one you do not want and rebuild")
        dest.parent.mkdir(exist_ok=True)
        os.replace(src, dest)
        moved.append(dest)
    data = Path(out_dir) / LEGACY
    if data.is_dir():
        for f in data.rglob("*"):  # what is left: a crashed writer's temp files, stale locks
            if f.is_file() and f.name.endswith((".tmp", ".lock")):
                f.unlink()
        for d in sorted((d for d in data.rglob("*") if d.is_dir()), reverse=True) + [data]:
            if not any(d.iterdir()):
                d.rmdir()
    return moved


CARD = "README.md"
_PENDING = "<!-- perfalign: card pending -->"
_PENDING_CARD = f"""{_PENDING}
# Dataset card pending

perfalign writes this folder's card when the build writing the folder finishes (cut short: rerun
it). Until then read one table at a time, from its own directory: `pandas.read_parquet("<folder>/<table>")`.
"""


def prepare_folder(out_dir: Path) -> list[Path]:
    """Ready a dataset folder for a build: older layouts moved (:func:`migrate_layout`; returns the
    moved paths), and a placeholder card at the root until the build writes the real one, so a
    directory read of the folder fails on it rather than mixing the tables written so far."""
    moved = migrate_layout(out_dir)
    if not (Path(out_dir) / CARD).exists():
        atomic_write_text(Path(out_dir) / CARD, _PENDING_CARD)
    return moved


def card_written(out_dir: Path) -> bool:
    """Whether a dataset folder holds its card (not the placeholder of a build that has not finished)."""
    card = Path(out_dir) / CARD
    return card.is_file() and not card.read_text(encoding="utf-8", errors="replace").startswith(_PENDING)


def write_shard(out_dir: Path, table: str, shard_id: str, rows: list[dict] | pa.Table, schema: pa.Schema,
                split: str, plain: tuple[str, ...] = ()) -> Path | None:
    """Write rows (dicts, or an Arrow table already in ``schema``) as one shard, atomically.

    ``plain``: columns of large, unique values (multi-MB test data) written without dictionary
    encoding, which costs the reader several times their size in memory and saves nothing."""
    if not len(rows):
        return None
    data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema=schema)
    final = table_dir(out_dir, table) / f"{split}-{shard_id}.parquet"
    dictionary = [f"{f.name}.list.element" if pa.types.is_list(f.type) else f.name  # Parquet leaf paths
                  for f in schema if f.name not in plain] if plain else True
    return write_parquet(final, data, compression="zstd", use_dictionary=dictionary)


def shard_files(out_dir: Path, table: str) -> list[Path]:
    """``table``'s shards in a dataset folder, in its directory or (not yet migrated) in an older layout."""
    legacy = Path(out_dir, LEGACY)
    return (sorted(table_dir(out_dir, table).glob("*.parquet")) + sorted((legacy / table).glob("*.parquet"))
            + sorted(legacy.glob(f"{table}-*.parquet")))


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
    """Parquet files of table ``name``: ``path`` is a dataset folder (its ``<name>/*.parquet``, or an
    older layout's ``data/<name>/``, ``data/<name>-*.parquet`` and ``data/<name>.parquet``), an older
    layout's ``data/`` folder, the table's directory, or a Parquet file."""
    p = Path(path)
    if p.is_file():
        return [p]
    for folder in (p, p.parent) if p.name == LEGACY else (p,):  # a dataset folder, or its data/ folder
        single = folder / LEGACY / f"{name}.parquet"
        if files := shard_files(folder, name) + ([single] if single.is_file() else []):
            return files
    # a flat data/ folder under another name, or the table's directory itself
    if files := sorted(p.glob(f"{name}-*.parquet")) or (sorted(p.glob("*.parquet")) if p.name == name else []):
        return files
    raise FileNotFoundError(f"no table {name!r} under {p} (no {name} table at {p}/{name}/: "
                            "a folder written by `perfalign perf build` or `perfalign triplets`)")


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
    for p in Path(out_dir).glob("*/.*.tmp"):
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
    return (f"corrupt shard {f.relative_to(out_dir)} moved to {dest.relative_to(out_dir)} ({why}); "
            "its rows will be rebuilt")


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
