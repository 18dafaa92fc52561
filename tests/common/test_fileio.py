"""Atomic writes give a file the permissions a plain open() would: the user's umask decides; the one
file hash follows names and contents, leaves hidden files out and subfolders when asked."""
from __future__ import annotations

import hashlib
import os
import stat

import pyarrow as pa
import pytest

from perfalign.common.fileio import atomic_write_text, hash_files, umask
from perfalign.perfdata.shards import write_shard


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_follow_the_umask(tmp_path, mask, expected):
    previous = os.umask(mask)
    try:
        assert umask() == mask
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        schema = pa.schema([("a", pa.int64())])
        shard = write_shard(tmp_path, "t", "00000", [{"a": 1}], schema, "train")
        text = atomic_write_text(tmp_path / "card.md", "x")
    finally:
        os.umask(previous)
    for path in (plain, shard, text):
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def test_an_explicit_mode_still_wins(tmp_path):
    assert stat.S_IMODE(atomic_write_text(tmp_path / "x", "x", mode=0o640).stat().st_mode) == 0o640


def test_one_file_hash_with_the_subfolder_rule_as_a_parameter(tmp_path):
    model = tmp_path / "model"
    (model / "trainer").mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "trainer" / "checkpoint").write_text("a")

    def key(path=model, **kw) -> str:
        h = hashlib.sha256()
        hash_files(h, path, **kw)
        return h.hexdigest()

    top, deep = key(subfolders=False), key()
    assert top != deep
    (model / ".lock").write_text("x")  # hidden: left out
    assert (key(subfolders=False), key()) == (top, deep)
    (model / "trainer" / "checkpoint").write_text("b")  # below a subfolder: only the deep hash moves
    assert key(subfolders=False) == top and key() != deep
    (model / "config.json").rename(model / "other.json")  # a name is part of the hash
    assert key(subfolders=False) != top
    (tmp_path / "same.json").write_text("{}")  # a file alone: its name and content
    assert key(tmp_path / "same.json") != key(model / "other.json")
