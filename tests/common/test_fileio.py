"""Atomic writes give a file the permissions a plain open() would: the user's umask decides."""
from __future__ import annotations

import os
import stat

import pyarrow as pa
import pytest

from perfalign.common.fileio import atomic_write_text, umask
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
