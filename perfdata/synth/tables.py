"""The output tables `synthetic` and `synthetic_rejects` (Parquet in out_dir/<table>/) and the
crash-safe journal that feeds them.

Every finished sample is appended to a JSONL journal (fsync'd) at once; the Parquet files are
rewritten atomically from table + journal at the end, every ``flush_every`` rows, and on the next
start (recovery after a crash). Rows are keyed by ``key`` = "<config hash>:<sample index>" and
deduplicated on it, so reruns never duplicate a sample.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from perfalign.perfdata.dataset_card import schema_rows, write_dataset_card
from perfalign.perfdata.shards import BuildLock, prepare_folder, read_parquet, table_dir, write_parquet

TABLES = ("synthetic", "synthetic_rejects")

# (column, Arrow type, description in the card): one source of truth for Parquet and the card
_COMMON = [
    ("key", pa.string(), "config hash : sample index (unique)"),
    ("sample_index", pa.int64(), "index of the sample in its generation run"),
    ("config_hash", pa.string(), "hash of the generation settings"),
    ("problem", pa.string(), "the problem statement the LLM wrote"),
    ("language", pa.string(), "cpp / python3"),
    ("fast", pa.string(), "the faster program"),
    ("slow", pa.string(), "the slower program"),
    ("test_inputs", pa.list_(pa.string()), "stdin of every verification input"),
    ("input_generator", pa.string(), "program that generated the inputs"),
    ("fast_cpu_times_s", pa.list_(pa.float64()), "per input: median CPU time over repeats (s)"),
    ("slow_cpu_times_s", pa.list_(pa.float64()), "per input, the slow program"),
    ("fast_cpu_time_s", pa.float64(), "sum over inputs (s)"),
    ("slow_cpu_time_s", pa.float64(), "sum over inputs (s)"),
    ("speedup", pa.float64(), "slow / fast CPU time (capped by the plausibility policy)"),
    ("speedup_raw", pa.float64(), "the ratio before the cap"),
    ("speedup_flags", pa.list_(pa.string()), "implausible / capped / remeasured / below_timer_resolution"),
    ("repeats", pa.int32(), "runs per input"),
    ("min_speedup", pa.float64(), "speedup a pair needed to be kept"),
    ("sandbox_backend", pa.string(), "sandbox backend that ran the programs"),
    ("isolated", pa.bool_(), "the sandbox isolated the programs"),
    ("seed_source", pa.string(), "where the seed code came from"),
    ("seed_path", pa.string(), "seed file"),
    ("seed_start_line", pa.int32(), "first line of the seed"),
    ("seed_end_line", pa.int32(), "last line of the seed"),
    ("seed_text", pa.string(), "the seed code shown to the LLM"),
    ("backend", pa.string(), "LLM backend"),
    ("model", pa.string(), "LLM model"),
    ("model_version", pa.string(), "model version the endpoint reported"),
    ("generation_params", pa.string(), "sampling parameters (JSON)"),
    ("cache_key", pa.string(), "key of the cached LLM answer"),
    ("request_id", pa.string(), "the endpoint's request id"),
    ("prompt_tokens", pa.int64(), "prompt tokens"),
    ("output_tokens", pa.int64(), "output tokens"),
    ("created_at", pa.string(), "ISO 8601, UTC"),
]
_REJECTS = [
    ("reason", pa.string(), "why the sample was rejected"),
    ("detail", pa.string(), "the rejection in detail"),
    ("raw_response", pa.string(), "the LLM's answer as received"),
]
SCHEMAS = {"synthetic": pa.schema([(n, t) for n, t, _ in _COMMON]),
           "synthetic_rejects": pa.schema([(n, t) for n, t, _ in _COMMON + _REJECTS])}
COLUMN_DOCS = {n: d for n, _, d in _COMMON + _REJECTS}
_DESCRIPTIONS = {
    "synthetic": "Verified (fast, slow) program pairs: both agree on every input and the fast one is faster by at "
                 "least min_speedup in the sandbox.",
    "synthetic_rejects": "Samples that were not kept, with the reason (nothing is dropped in silence).",
}


def write_card(out_dir: Path) -> Path | None:
    """out_dir/README.md: one config per table with rows (`synthetic` the default), so
    `datasets.load_dataset(out_dir)` and `load_dataset(out_dir, "synthetic_rejects")` work."""
    out_dir = Path(out_dir)
    tables = {t: {"data_files": f"{t}/{t}.parquet", "description": _DESCRIPTIONS[t],
                  "schema": schema_rows(SCHEMAS[t], COLUMN_DOCS)}
              for t in TABLES if (table_dir(out_dir, t) / f"{t}.parquet").is_file()
              and pq.ParquetFile(table_dir(out_dir, t) / f"{t}.parquet").metadata.num_rows}
    if not tables:
        return None
    return write_dataset_card(out_dir, title="perfalign synthetic fast/slow pairs",
                              tags=("code", "performance", "synthetic"),
                              description="Program pairs written by an LLM from seed code and verified by execution "
                                          "(perfalign.perfdata.synth; paper §IV-B).", tables=tables)


class SynthTables:
    def __init__(self, out_dir: Path, *, flush_every: int = 1000):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.journal_path = self.dir / ".synthetic.journal.jsonl"
        self.flush_every = flush_every
        # two runs appending to one out_dir would race on the tables
        self._lock = BuildLock(self.dir, ".synthetic.lock", "another generation run")
        prepare_folder(self.dir)
        self._rows = {t: self._read_parquet(t) for t in TABLES}
        self._since_flush = 0
        if self._read_journal():  # rows recovered after a crash
            self.flush()
        self._journal = open(self.journal_path, "a", encoding="utf-8")

    def path(self, table: str) -> Path:
        return table_dir(self.dir, table) / f"{table}.parquet"

    def _read_parquet(self, table: str) -> dict[str, dict[str, Any]]:
        p = self.path(table)
        return {r["key"]: r for r in read_parquet(p).to_pylist()} if p.exists() else {}

    def _read_journal(self) -> int:
        n = 0
        if not self.journal_path.exists():
            return 0
        with open(self.journal_path, encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a crash mid-write: that sample is redone
                self._rows[entry["table"]].setdefault(entry["row"]["key"], entry["row"])
                n += 1
        return n

    def keys(self) -> set[str]:
        return set(self._rows["synthetic"]) | set(self._rows["synthetic_rejects"])

    def count(self, table: str, config_hash: str) -> int:
        return sum(1 for r in self._rows[table].values() if r.get("config_hash") == config_hash)

    def append(self, table: str, row: dict[str, Any]) -> None:
        if row["key"] in self._rows[table]:
            return
        self._journal.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
        self._journal.flush()
        os.fsync(self._journal.fileno())
        self._rows[table][row["key"]] = row
        self._since_flush += 1
        if self._since_flush >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Rewrites both Parquet files from memory, then empties the journal."""
        for table in TABLES:
            rows = sorted(self._rows[table].values(), key=lambda r: (r["config_hash"], r["sample_index"]))
            # a column a row lacks is null; keys that are not columns are left out
            write_parquet(self.path(table), pa.Table.from_pylist(rows, schema=SCHEMAS[table]), compression="zstd")
        # Only after both tables are durable may the journal go.
        with open(self.journal_path, "w", encoding="utf-8") as f:
            f.flush()
            os.fsync(f.fileno())
        self._since_flush = 0

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._journal.close()
            self._lock.release()
