"""Parquet records: every rollout (tier, reward, GFLOPS, peak fraction, techniques...) and the
QD archives. Rows are written per step to numbered part files (a crash loses at most a step)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROLLOUT_SCHEMA = pa.schema([
    ("arm", pa.string()), ("seed", pa.int64()), ("step", pa.int64()), ("stage", pa.string()),
    ("rollout_id", pa.string()), ("task", pa.string()), ("completion", pa.string()),
    ("permitted", pa.list_(pa.string())), ("tier", pa.string()), ("reward", pa.float64()),
    ("gflops", pa.float64()), ("peak_gflops", pa.float64()), ("peak_fraction", pa.float64()),
    ("naive_gflops", pa.float64()), ("speedup_vs_naive", pa.float64()), ("flops", pa.float64()),
    ("verdict", pa.string()), ("message", pa.string()), ("techniques", pa.list_(pa.string())),
    ("niche", pa.string()), ("flags", pa.list_(pa.string())), ("code_sha", pa.string()),
    ("worker_pid", pa.int64()), ("worker_cpus", pa.list_(pa.int64())), ("measure_s", pa.float64()),
    ("attempts", pa.int64()), ("cached", pa.bool_()),
    # common.outcomes: the reward withheld (None) for a fault the rollout provably did not cause, and why
    ("withheld", pa.bool_()), ("cause", pa.string()),
])


def _row(rec: dict) -> dict:
    out = {}
    for f in ROLLOUT_SCHEMA:
        v = rec.get(f.name)
        if pa.types.is_list(f.type):
            v = list(v) if v is not None else []
        elif pa.types.is_string(f.type) and v is not None and not isinstance(v, str):
            v = str(v)
        out[f.name] = v
    return out


class RolloutWriter:
    def __init__(self, out_dir: str | Path) -> None:
        self.dir = Path(out_dir) / "rollouts"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.part = len(list(self.dir.glob("part-*.parquet")))

    def write(self, records: list[dict]) -> Path | None:
        if not records:
            return None
        table = pa.Table.from_pylist([_row(r) for r in records], schema=ROLLOUT_SCHEMA)
        path = self.dir / f"part-{self.part:05d}.parquet"
        pq.write_table(table, path)
        self.part += 1
        return path


def read_rollouts(out_dir: str | Path) -> pa.Table:
    return pq.read_table(Path(out_dir) / "rollouts", schema=ROLLOUT_SCHEMA)


def write_archive(rows: list[dict], out_dir: str | Path) -> Path:
    path = Path(out_dir) / "archive.parquet"
    pq.write_table(pa.Table.from_pylist(rows) if rows else pa.table({"problem": pa.array([], pa.string())}), path)
    return path


def write_json(obj, path: str | Path) -> Path:
    Path(path).write_text(json.dumps(obj, indent=2, default=str))
    return Path(path)
