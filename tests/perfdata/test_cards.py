"""Every output a user may load is loadable with the real `datasets`: the triplets folder (tables
`triplets` and `sft_prompts`) and the synthetic pairs folder (`synthetic`, `synthetic_rejects`)
carry a dataset card with one config per table, so `load_dataset(path)` gives the default table
and `load_dataset(path, "<table>")` each one (without a card, their files share one default
config and `datasets` raises a CastError)."""
from __future__ import annotations

import json

import datasets
import pyarrow.parquet as pq
from llm_servers import Action, FakeSandbox, OpenAIServer
from test_triplets import make_codecontests, make_synthetic

from perfalign.perfdata.synth import SynthConfig, generate_synthetic
from perfalign.perfdata.triplets import TripletConfig, build_triplets


def _load(path, *config):
    return datasets.load_dataset(str(path), *config, split="train", cache_dir=str(path.parent / "hf-cache"))


def test_triplets_and_sft_prompts_load_by_config(tmp_path):
    make_codecontests(tmp_path / "cc")
    make_synthetic(tmp_path / "syn")
    out = build_triplets(tmp_path / "out", tmp_path / "cc", tmp_path / "syn", TripletConfig(seed=7))
    want = {t: pq.read_table(p).num_rows for t, p in (("triplets", out.triplets_path),
                                                      ("sft_prompts", out.sft_prompts_path))}
    assert min(want.values()) > 0
    default = _load(out.out_dir)
    assert len(default) == want["triplets"] and "margin" in default.column_names
    for table, n in want.items():
        ds = _load(out.out_dir, table)
        assert len(ds) == n and "split" in ds.column_names, table
    sft = _load(out.out_dir, "sft_prompts")
    assert {"prompt", "completion", "kind"} <= set(sft.column_names)
    card = (out.out_dir / "README.md").read_text()
    assert "config_name: triplets" in card and "config_name: sft_prompts" in card and "margin" in card


def test_synthetic_pairs_and_rejects_load_by_config(tmp_path):
    out = tmp_path / "synthetic"
    # every third answer is not JSON: a reject; the rest are verified by the fake sandbox and kept
    with OpenAIServer(lambda i, rec: Action(text="not json at all") if i % 3 == 0 else None) as srv:
        cfg = SynthConfig(n=6, backend="openai", api_key="k", base_url=srv.url + "/v1", model="m", concurrency=1,
                          requests_per_minute=None, repeats=1, backoff_base_s=0.01, cache_dir=tmp_path / "cache")
        s = generate_synthetic(cfg, out, sandbox=FakeSandbox())
    assert s.kept > 0 and s.rejected > 0, json.dumps(s.to_dict())
    default = _load(out)
    assert len(default) == s.kept and {"fast", "slow", "speedup"} <= set(default.column_names)
    assert len(_load(out, "synthetic")) == s.kept
    rejects = _load(out, "synthetic_rejects")
    assert len(rejects) == s.rejected and all(rejects["reason"])
