"""Nothing vanishes in silence: a source file that cannot be read (a truncated Parquet
copy) fails the build with its name and reason in one line, unless --allow-partial, which goes
on and says loudly what was left out; every summary (the terminal, the Prefect run log, the
dataset card) lists the malformed records' reasons, grouped with counts; the `errors` table
names sources relative to the source folder, never by this machine's absolute path."""
from __future__ import annotations

import gzip
import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perfalign.perfdata import shards
from perfalign.perfdata.codecontests import SourceUnreadable
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.perf_build import build
from perfalign.perfdata.schema import arrow_schema

PY_SUM = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
TRUNCATED = "test-00000-of-00001.parquet"


def _row(name, **kw):
    row = {"name": name, "description": f"sum the numbers ({name})",
           "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
           "solutions": {"language": [3], "solution": [PY_SUM]},
           "incorrect_solutions": {"language": [], "solution": []},
           "time_limit": {"seconds": 1, "nanos": 0}, "memory_limit_bytes": 256 << 20}
    row.update(kw)
    return row


def _truncate(path: Path) -> None:
    blob = path.read_bytes()
    path.write_bytes(blob[: len(blob) // 2])  # what a failed copy or a full disk leaves


def _held_out() -> list[dict]:
    return [{**_row(f"held-{i}"), "description": "x" * 5000} for i in range(4)]


def _source(root: Path) -> Path:
    """data/train-...parquet: one good problem and three mistyped rows (two share a reason);
    data/test-...parquet: a good file cut in half."""
    data = root / "data"
    data.mkdir(parents=True)
    rows = [_row("good", time_limit=None, cf_tags=None), _row("tl-a", time_limit="2 seconds"),
            _row("tl-b", time_limit="2 seconds"), _row("tags", time_limit=None, cf_tags="dp")]
    pq.write_table(pa.Table.from_pylist(rows), data / "train-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist(_held_out()), data / TRUNCATED)
    _truncate(data / TRUNCATED)
    return root


def _jsonl_source(root: Path) -> Path:
    """The same as JSON lines (train.jsonl), the test split a gzip stream cut in half: its
    damage shows only while it is read, after some of its rows."""
    root.mkdir(parents=True)
    rows = [_row("good"), _row("tl-a", time_limit="2 seconds"), _row("tags", cf_tags="dp")]
    (root / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with gzip.open(root / "test.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in _held_out() * 20))
    _truncate(root / "test.jsonl.gz")
    return root


def _settings() -> BuildSettings:
    return BuildSettings(repeats=1, batch_size=8)


def test_an_unreadable_source_file_fails_the_build_with_its_name(tmp_path):
    src = _source(tmp_path / "src")
    with pytest.raises(SourceUnreadable) as e:
        build(str(src), tmp_path / "out", _settings())
    msg = str(e.value)
    assert "\n" not in msg and f"data/{TRUNCATED}: unreadable (" in msg and "--allow-partial" in msg
    assert str(tmp_path) not in msg  # named relative to the source
    assert not list((tmp_path / "out").glob("submissions*/*"))  # found before anything ran


def test_damage_found_while_streaming_stops_the_build_too(tmp_path):
    src = _jsonl_source(tmp_path / "src")
    with pytest.raises(SourceUnreadable) as e:
        build(str(src), tmp_path / "out", _settings())
    msg = str(e.value)
    assert "\n" not in msg and "test.jsonl.gz: unreadable (EOFError: " in msg and " rows (fix or remove it" in msg


def test_allow_partial_goes_on_and_every_summary_says_what_was_lost(tmp_path):
    src = _source(tmp_path / "src")
    out = tmp_path / "out"
    s = build(str(src), out, _settings(), allow_partial=True)
    assert s.problems == 1 and s.status.get("measured") == 1
    assert [f.split(": ")[0] for f in s.unreadable_files] == [f"data/{TRUNCATED}"]
    groups = {g["reason"]: g["count"] for g in s.error_reasons}
    assert groups["time_limit: expected {seconds, nanos}, got str '2 seconds'"] == 2
    assert groups["cf_tags: expected a list of strings"] == 1
    errs = shards.read_table(out, "errors", arrow_schema("errors")).to_pylist()
    assert {e["source"] for e in errs} == {"data/train-00000-of-00001.parquet", f"data/{TRUNCATED}"}  # not absolute
    card = (out / "README.md").read_text()
    assert "Partial build" in card and f"SKIPPED source file (--allow-partial): data/{TRUNCATED}" in card
    assert "2 x time_limit: expected {seconds, nanos}" in card
    assert "1 x cf_tags: expected a list of strings (e.g. data/train-00000-of-00001.parquet row 3)" in card
    assert str(tmp_path) not in card


def _cli(args, cwd: Path) -> subprocess.CompletedProcess:
    # no session server: the command starts its own, its database under PERFALIGN_HOME (read below)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PERFALIGN_HOME=str(cwd / "home"), COLUMNS="200",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="600")  # a loaded machine starts it slowly
    return subprocess.run([sys.executable, "-m", "perfalign.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_fails_in_one_line_then_with_allow_partial_shows_reasons_and_skips(tmp_path):
    src = _source(tmp_path / "src")
    out = tmp_path / "out"
    p = _cli(["perf", "build", "--source", str(src), "--out", str(out), "--repeats", "1"], tmp_path)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: cannot read 1 source file: data/") and TRUNCATED in lines[0]
    assert not out.exists()  # failed before Prefect started

    # JSON lines with mistyped fields, and a gzip file whose damage shows only while reading it
    src = _jsonl_source(tmp_path / "jsonl")
    p = _cli(["perf", "build", "--source", str(src), "--out", str(out), "--repeats", "1", "--allow-partial"], tmp_path)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text
    assert "Traceback" not in text
    assert "SKIPPED (allow_partial): source file test.jsonl.gz: unreadable (EOFError" in text  # as it happens
    assert "SKIPPED source file (--allow-partial): test.jsonl.gz: unreadable (EOFError" in text  # closing summary
    # a mistyped field: the terminal shows the reason, not only a count
    assert "1 x time_limit: expected {seconds, nanos}, got str '2 seconds' (e.g. train.jsonl row 1)" in text
    assert "1 x cf_tags: expected a list of strings (e.g. train.jsonl row 2)" in text
    # the Prefect run log (the UI) lists the same reasons, not only a count
    with sqlite3.connect(tmp_path / "home" / "prefect" / "prefect.db") as c:
        logged = [m for (m,) in c.execute("select message from log")]
    assert any("malformed source records: 1 x time_limit: expected {seconds, nanos}" in m for m in logged), logged
    assert any("SKIPPED" in m and "test.jsonl.gz: unreadable (EOFError" in m for m in logged), logged[-20:]


def test_seed_files_left_out_of_the_pool_are_counted_aloud(tmp_path, caplog):
    from perfalign.perfdata.synth.seeds import load_seed_files

    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\nprint(2)\n")
    logger = logging.getLogger("perfalign.perfdata.synth.seeds")
    logger.addHandler(caplog.handler)  # flows.env may have stopped "perfalign" propagating to the root
    try:
        files = load_seed_files(str(tmp_path))
    finally:
        logger.removeHandler(caplog.handler)
    assert [f.path for f in files] == ["a.py"]
    assert "1 source files not used: 1 not UTF-8 text" in caplog.text
