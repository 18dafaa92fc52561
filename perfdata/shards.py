"""Atomic Parquet shards: a table is the union of ``data/<table>-<id>.parquet`` files.

A shard is written to a hidden temp file and renamed into place, so a crash (kill -9 at any
moment) leaves either the whole shard or nothing; readers ignore leftovers.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq


def shard_path(out_dir: Path, table: str, shard_id: str) -> Path:
    return Path(out_dir) / "data" / f"{table}-{shard_id}.parquet"


def write_shard(out_dir: Path, table: str, shard_id: str, rows: list[dict], schema: pa.Schema) -> Path | None:
    if not rows:
        return None
    final = shard_path(out_dir, table, shard_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}.tmp"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp, compression="zstd")
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return final


def shard_files(out_dir: Path, table: str) -> list[Path]:
    return sorted((Path(out_dir) / "data").glob(f"{table}-*.parquet"))


def read_table(out_dir: Path, table: str, schema: pa.Schema, columns: Iterable[str] | None = None) -> pa.Table:
    files = shard_files(out_dir, table)
    cols = list(columns) if columns is not None else None
    if not files:
        s = schema if cols is None else pa.schema([schema.field(c) for c in cols])
        return s.empty_table()
    return pa.concat_tables([pq.read_table(f, columns=cols, schema=schema if cols is None else None) for f in files])


def read_column(out_dir: Path, table: str, column: str) -> set:
    out: set = set()
    for f in shard_files(out_dir, table):
        out.update(pq.read_table(f, columns=[column]).column(column).to_pylist())
    return out


def clean_temp(out_dir: Path) -> int:
    """Remove temp files left by a crashed writer; returns how many."""
    n = 0
    for p in (Path(out_dir) / "data").glob(".*.tmp"):
        p.unlink(missing_ok=True)
        n += 1
    return n
