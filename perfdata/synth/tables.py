"""The output tables `synthetic` and `synthetic_rejects` (Parquet under out_dir/data/) and the
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

from perfalign.perfdata.shards import BuildLock, read_parquet, write_parquet

TABLES = ("synthetic", "synthetic_rejects")

_COMMON = [
    ("key", pa.string()),
    ("sample_index", pa.int64()),
    ("config_hash", pa.string()),
    ("problem", pa.string()),
    ("language", pa.string()),
    ("fast", pa.string()),
    ("slow", pa.string()),
    ("test_inputs", pa.list_(pa.string())),
    ("input_generator", pa.string()),
    ("fast_cpu_times_s", pa.list_(pa.float64())),   # per input: median CPU time over repeats
    ("slow_cpu_times_s", pa.list_(pa.float64())),
    ("fast_cpu_time_s", pa.float64()),              # sum over inputs
    ("slow_cpu_time_s", pa.float64()),
    ("speedup", pa.float64()),                      # slow_cpu_time_s / fast_cpu_time_s (common.plausibility: capped)
    ("speedup_raw", pa.float64()),                  # the ratio before the cap
    ("speedup_flags", pa.list_(pa.string())),       # implausible / capped / remeasured / below_timer_resolution
    ("repeats", pa.int32()),
    ("min_speedup", pa.float64()),
    ("sandbox_backend", pa.string()),
    ("isolated", pa.bool_()),
    ("seed_source", pa.string()),
    ("seed_path", pa.string()),
    ("seed_start_line", pa.int32()),
    ("seed_end_line", pa.int32()),
    ("seed_text", pa.string()),
    ("backend", pa.string()),
    ("model", pa.string()),
    ("model_version", pa.string()),
    ("generation_params", pa.string()),             # JSON
    ("cache_key", pa.string()),
    ("request_id", pa.string()),
    ("prompt_tokens", pa.int64()),
    ("output_tokens", pa.int64()),
    ("created_at", pa.string()),                    # ISO 8601, UTC
]
SCHEMAS = {
    "synthetic": pa.schema(_COMMON),
    "synthetic_rejects": pa.schema(_COMMON + [
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("raw_response", pa.string()),
    ]),
}

COLUMN_DOCS = {
    "key": "config hash : sample index (unique)", "sample_index": "index of the sample in its generation run",
    "config_hash": "hash of the generation settings", "problem": "the problem statement the LLM wrote",
    "language": "cpp / python3", "fast": "the faster program", "slow": "the slower program",
    "test_inputs": "stdin of every verification input", "input_generator": "program that generated the inputs",
    "fast_cpu_times_s": "per input: median CPU time over repeats (s)",
    "slow_cpu_times_s": "per input, the slow program",
    "fast_cpu_time_s": "sum over inputs (s)", "slow_cpu_time_s": "sum over inputs (s)",
    "speedup": "slow / fast CPU time (capped by the plausibility policy)", "speedup_raw": "the ratio before the cap",
    "speedup_flags": "implausible / capped / remeasured / below_timer_resolution", "repeats": "runs per input",
    "min_speedup": "speedup a pair needed to be kept", "sandbox_backend": "sandbox backend that ran the programs",
    "isolated": "the sandbox isolated the programs", "seed_source": "where the seed code came from",
    "seed_path": "seed file", "seed_start_line": "first line of the seed", "seed_end_line": "last line of the seed",
    "seed_text": "the seed code shown to the LLM", "backend": "LLM backend", "model": "LLM model",
    "model_version": "model version the endpoint reported", "generation_params": "sampling parameters (JSON)",
    "cache_key": "key of the cached LLM answer", "request_id": "the endpoint's request id",
    "prompt_tokens": "prompt tokens", "output_tokens": "output tokens", "created_at": "ISO 8601, UTC",
    "reason": "why the sample was rejected", "detail": "the rejection in detail",
    "raw_response": "the LLM's answer as received",
}
_DESCRIPTIONS = {
    "synthetic": "Verified (fast, slow) program pairs: both agree on every input and the fast one is faster by at "
                 "least min_speedup in the sandbox.",
    "synthetic_rejects": "Samples that were not kept, with the reason (nothing is dropped in silence).",
}


def write_card(out_dir: Path) -> Path | None:
    """out_dir/README.md: one config per table with rows (`synthetic` the default), so
    `datasets.load_dataset(out_dir)` and `load_dataset(out_dir, "synthetic_rejects")` work."""
    from perfalign.perfdata.dataset_card import schema_rows, write_dataset_card

    out_dir = Path(out_dir)
    tables = {t: {"data_files": f"data/{t}.parquet", "description": _DESCRIPTIONS[t],
                  "schema": schema_rows(SCHEMAS[t], COLUMN_DOCS)}
              for t in TABLES if (out_dir / "data" / f"{t}.parquet").is_file()
              and pq.ParquetFile(out_dir / "data" / f"{t}.parquet").metadata.num_rows}
    if not tables:
        return None
    return write_dataset_card(out_dir, title="perfalign synthetic fast/slow pairs",
                              tags=("code", "performance", "synthetic"),
                              description="Program pairs written by an LLM from seed code and verified by execution "
                                          "(perfalign.perfdata.synth; paper §IV-B).", tables=tables)


class SynthTables:
    def __init__(self, data_dir: Path, *, flush_every: int = 1000):
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.journal_path = self.dir / ".synthetic.journal.jsonl"
        self.flush_every = flush_every
        # two runs appending to one out_dir would race on the tables
        self._lock = BuildLock(self.dir, ".synthetic.lock", "another generation run")
        self._rows = {t: self._read_parquet(t) for t in TABLES}
        self._since_flush = 0
        recovered = self._read_journal()
        if recovered:
            self.flush()
        self._journal = open(self.journal_path, "a", encoding="utf-8")

    def path(self, table: str) -> Path:
        return self.dir / f"{table}.parquet"

    def _read_parquet(self, table: str) -> dict[str, dict[str, Any]]:
        p = self.path(table)
        if not p.exists():
            return {}
        return {r["key"]: r for r in read_parquet(p).to_pylist()}

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

    def count(self, table: str, config_hash: str | None = None) -> int:
        return sum(1 for r in self._rows[table].values()
                   if config_hash is None or r.get("config_hash") == config_hash)

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
            schema = SCHEMAS[table]
            arrow = pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in rows], schema=schema)
            write_parquet(self.path(table), arrow, compression="zstd")
        # Only after both tables are durable may the journal go.
        with open(self.journal_path, "w", encoding="utf-8") as f:
            f.flush()
            os.fsync(f.fileno())
        self._since_flush = 0

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if hasattr(self, "_journal"):
                self._journal.close()
            self._lock.release()
