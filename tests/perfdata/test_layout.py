"""Each table of a dataset folder lives in its own directory at the folder's root (``<table>/``,
beside README.md), so ``pandas.read_parquet`` of a table directory and ``load_dataset(folder, table)``
give exactly that table's rows and columns, and ``pandas.read_parquet(folder)`` fails instead of
mixing tables, for CodeContests-Perf, synthetic and triplets folders, also while a build runs or after
it is cut short; folders in the older layouts (``data/<table>/`` and the flat ``data/<table>-*.parquet``)
are read as they are and moved by the next build."""
from __future__ import annotations

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_perf_robust import PY_SUM, _row, _write_jsonl
from test_triplets import make_codecontests, make_synthetic

from perfalign.perfdata import perf_build, shards
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.perf_build import build
from perfalign.perfdata.publish import PublishError, publish_dataset
from perfalign.perfdata.schema import arrow_schema
from perfalign.perfdata.synth.tables import SCHEMAS, SynthTables, write_card
from perfalign.perfdata.triplets import SFT_SCHEMA, TRIPLET_SCHEMA, TripletConfig, build_triplets


def _assert_one_table(folder, table, schema: pa.Schema, rows: int) -> None:
    with pytest.raises(ValueError, match="parquet"):  # the card (README.md) is no Parquet file: nothing mixes
        pd.read_parquet(folder)
    assert not (folder / "data").exists()
    df = pd.read_parquet(folder / table)
    assert (len(df), list(df.columns)) == (rows, schema.names), table
    ds = datasets.load_dataset(str(folder), table, cache_dir=str(folder.parent / f"hf-{folder.name}"))
    assert sum(len(s) for s in ds.values()) == rows and all(s.column_names == schema.names for s in ds.values())


def _assert_default(folder, table) -> None:
    """``load_dataset(folder)`` without a config name loads ``table`` (the card's default), nothing else."""
    ds = datasets.load_dataset(str(folder), cache_dir=str(folder.parent / f"hf-default-{folder.name}"))
    df = pd.read_parquet(folder / table)
    assert sum(len(s) for s in ds.values()) == len(df) and all(s.column_names == list(df.columns) for s in ds.values())


def _nest(folder) -> None:
    """The layout with every table's directory under ``data/``."""
    (folder / "data").mkdir()
    for d in [d for d in folder.iterdir() if d.is_dir() and list(d.glob("*.parquet"))]:
        d.rename(folder / "data" / d.name)


def _flatten(folder) -> None:
    """The layout folders had before tables got their own directories."""
    _nest(folder)
    for d in [d for d in (folder / "data").iterdir() if d.is_dir()]:
        for f in d.glob("*.parquet"):
            f.rename(folder / "data" / (f"{d.name}.parquet" if f.stem == d.name else f"{d.name}-{f.name}"))
        d.rmdir()


def _perf_folder(tmp_path):
    src = tmp_path / "train.jsonl"
    _write_jsonl(src, [_row("a", [(3, PY_SUM)], [(3, "print(1)\n")]), _row("b", [(3, PY_SUM), (3, "print(2)\n")])])
    out = tmp_path / "cc"
    return src, out, build(str(src), out, BuildSettings(repeats=1))


def test_codecontests_perf_tables_do_not_mix(tmp_path):
    _, out, s = _perf_folder(tmp_path)
    for table, rows in (("problems", 2), ("submissions", s.submissions), ("rejects", None)):
        n = shards.read_table(out, table, arrow_schema(table)).num_rows
        if rows is None and not n:
            continue
        assert rows is None or n == rows
        _assert_one_table(out, table, arrow_schema(table), n)
    _assert_default(out, "submissions")


def test_synthetic_and_triplets_tables_do_not_mix(tmp_path):
    tables = SynthTables(tmp_path / "syn")
    for i in range(3):
        tables.append("synthetic", dict(key=f"k{i}", sample_index=i, problem="p", language="python3", fast="f()",
                                        slow="s()", fast_cpu_time_s=0.1, slow_cpu_time_s=0.5, speedup=5.0,
                                        config_hash="h"))
    tables.append("synthetic_rejects", dict(key="r0", sample_index=9, reason="not json", config_hash="h"))
    tables.close()
    write_card(tmp_path / "syn")
    _assert_one_table(tmp_path / "syn", "synthetic", SCHEMAS["synthetic"], 3)
    _assert_one_table(tmp_path / "syn", "synthetic_rejects", SCHEMAS["synthetic_rejects"], 1)
    _assert_default(tmp_path / "syn", "synthetic")

    make_codecontests(tmp_path / "ccfix")
    make_synthetic(tmp_path / "synfix")
    res = build_triplets(tmp_path / "tri", tmp_path / "ccfix", tmp_path / "synfix", TripletConfig(seed=7))
    for table, schema, path in (("triplets", TRIPLET_SCHEMA, res.triplets_path),
                                ("sft_prompts", SFT_SCHEMA, res.sft_prompts_path)):
        _assert_one_table(tmp_path / "tri", table, schema, pq.read_table(path).num_rows)
    _assert_default(tmp_path / "tri", "triplets")


def test_a_build_running_or_cut_short_never_mixes_tables(tmp_path, monkeypatch):
    """Before a build writes its card, the folder's root holds a placeholder card: a directory read
    of the folder fails on it instead of mixing the tables written so far, and publish refuses the
    folder; the next build finishes and writes the card over it."""
    def cut_short(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(perf_build, "finalize", cut_short)
    with pytest.raises(KeyboardInterrupt):
        _perf_folder(tmp_path)
    out = tmp_path / "cc"
    with pytest.raises(ValueError, match="parquet"):
        pd.read_parquet(out)
    assert len(pd.read_parquet(out / "submissions")) and not shards.card_written(out)
    for table in ("problems", "submissions"):
        assert list(pd.read_parquet(out / table).columns) == arrow_schema(table).names
    with pytest.raises(PublishError, match="card is pending"):
        publish_dataset(out, "org/x", token="t", endpoint="http://127.0.0.1:9")
    monkeypatch.undo()
    s = build(str(tmp_path / "train.jsonl"), out, BuildSettings(repeats=1))
    assert shards.card_written(out) and "configs:" in (out / "README.md").read_text()
    _assert_one_table(out, "submissions", arrow_schema("submissions"), s.submissions)

    tables = SynthTables(tmp_path / "syn")  # a generation run cut short: rows flushed, no card
    tables.append("synthetic", dict(key="k0", sample_index=0, problem="p", language="python3", fast="f", slow="s",
                                    fast_cpu_time_s=0.1, slow_cpu_time_s=0.5, speedup=5.0, config_hash="h"))
    tables.append("synthetic_rejects", dict(key="r0", sample_index=9, reason="not json", config_hash="h"))
    tables.flush()
    assert len(pd.read_parquet(tmp_path / "syn" / "synthetic_rejects")) == 1
    with pytest.raises(ValueError, match="parquet"):
        pd.read_parquet(tmp_path / "syn")
    tables.close()


def test_flat_layout_is_read_then_migrated_losing_nothing(tmp_path):
    src, out, _ = _perf_folder(tmp_path)
    before = {t: sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) for t in ("problems",
                                                                                                    "submissions")}
    _flatten(out)
    assert not [d for d in (out / "data").iterdir() if d.is_dir()]
    for t, rows in before.items():  # read as it is
        assert sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) == rows
        assert len(shards.load_table(out, t)) == len(rows)
    first = sorted((out / "data").glob("*.parquet"))[0]  # a move cut short: one file moved, the rest flat
    table = first.name.split("-", 1)[0]
    (out / "data" / table).mkdir()
    first.rename(out / "data" / table / first.name[len(table) + 1:])
    for t, rows in before.items():
        assert len(shards.load_table(out, t)) == len(rows)
    again = build(str(src), out, BuildSettings(repeats=1))  # the next build finishes the move
    assert again.problems == 2 and not (out / "data").exists()
    for t, rows in before.items():
        assert sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) == rows
        assert len(pd.read_parquet(out / t)) == len(rows)

    syn = tmp_path / "syn" / "data"
    syn.mkdir(parents=True)
    row = dict(key="k", sample_index=0, problem="p", language="python3", fast="f", slow="s", fast_cpu_time_s=0.1,
               slow_cpu_time_s=0.5, speedup=5.0, config_hash="h")
    pq.write_table(pa.Table.from_pylist([row], schema=SCHEMAS["synthetic"]), syn / "synthetic.parquet")
    assert len(shards.load_table(syn.parent, "synthetic")) == 1
    tables = SynthTables(syn.parent)
    assert tables.keys() == {"k"} and (syn.parent / "synthetic" / "synthetic.parquet").is_file()
    assert not syn.exists()
    tables.close()

    make_codecontests(tmp_path / "ccfix")
    make_synthetic(tmp_path / "synfix")
    tri = build_triplets(tmp_path / "tri", tmp_path / "ccfix", tmp_path / "synfix", TripletConfig(seed=7))
    n = pq.read_table(tri.triplets_path).num_rows
    _flatten(tmp_path / "tri")
    assert len(shards.load_table(tmp_path / "tri", "triplets")) == n
    build_triplets(tmp_path / "tri", tmp_path / "ccfix", tmp_path / "synfix", TripletConfig(seed=7))
    assert not (tmp_path / "tri" / "data").exists()
    assert len(shards.load_table(tmp_path / "tri", "triplets")) == n  # moved and replaced, not doubled


def test_nested_layout_is_read_then_migrated_losing_nothing(tmp_path):
    """Folders written with every table's directory under ``data/`` (and a synthetic run's journal
    there) are read as they are; the next build moves them to the folder's root."""
    src, out, _ = _perf_folder(tmp_path)
    before = {t: sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) for t in ("problems",
                                                                                                    "submissions")}
    _nest(out)
    (out / "data" / "submissions" / ".train-x.parquet.tmp").write_bytes(b"torn")  # a crashed writer's leftover
    for t, rows in before.items():
        assert sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) == rows
        assert len(shards.load_table(out / "data", t)) == len(shards.load_table(out, t)) == len(rows)
    build(str(src), out, BuildSettings(repeats=1))
    assert not (out / "data").exists()
    for t, rows in before.items():
        assert sorted(map(str, shards.read_table(out, t, arrow_schema(t)).to_pylist())) == rows
        _assert_one_table(out, t, arrow_schema(t), len(rows))

    syn = tmp_path / "syn"
    tables = SynthTables(syn)
    tables.append("synthetic", dict(key="k0", sample_index=0, problem="p", language="python3", fast="f", slow="s",
                                    fast_cpu_time_s=0.1, slow_cpu_time_s=0.5, speedup=5.0, config_hash="h"))
    tables.close()
    journal = '{"table": "synthetic", "row": {"key": "k1", "sample_index": 1, "config_hash": "h"}}\n'
    _nest(syn)
    (syn / ".synthetic.journal.jsonl").rename(syn / "data" / ".synthetic.journal.jsonl")
    (syn / "data" / ".synthetic.journal.jsonl").write_text(journal)  # a row the crashed run had not flushed
    tables = SynthTables(syn)
    assert tables.keys() == {"k0", "k1"} and not (syn / "data").exists()
    tables.close()
    assert sorted(pd.read_parquet(syn / "synthetic")["key"]) == ["k0", "k1"]
