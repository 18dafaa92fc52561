"""Unit tests of the synthetic-data building blocks: seeds, prompt, parsing, cache, throttling,
config, pricing. No network, no sandbox."""
from __future__ import annotations

import json
import threading
import time
import types

import pytest

from perfalign.perfdata.synth import SynthConfig
from perfalign.perfdata.synth.cache import ResponseCache, cache_key
from perfalign.perfdata.synth.config import resolve_backend
from perfalign.perfdata.synth.pricing import estimate_cost, prices_for
from perfalign.perfdata.synth.prompt import build_prompt, gemini_schema, json_schema, language_for_index
from perfalign.perfdata.synth.response import MalformedResponse, parse_pair
from perfalign.perfdata.synth.sample_pairs import load_sample_pairs
from perfalign.perfdata.synth.seeds import BUNDLED_SEEDS, load_seed_files, pick_seed
from perfalign.perfdata.synth.throttle import RateLimiter, TransientError, call_with_retries

# ---------------------------------------------------------------------------- seeds

def _write_tree(root):
    (root / "sub").mkdir(parents=True)
    (root / "a.cpp").write_text("\n".join(f"int line{i} = {i};" for i in range(40)) + "\n")
    (root / "sub" / "b.py").write_text("\n".join(f"x{i} = {i}" for i in range(3)) + "\n")
    (root / "notes.txt").write_text("not a source file\n")
    (root / "blob.py").write_bytes(b"\xff\xfe\x00binary")
    (root / "empty.py").write_text("   \n\n")


def test_seeds_from_local_directory_are_deterministic_windows(tmp_path):
    _write_tree(tmp_path)
    files = load_seed_files(str(tmp_path))
    assert [f.path for f in files] == ["a.cpp", "sub/b.py"]  # no .txt, binary or blank files
    seeds = [pick_seed(files, 7, i) for i in range(50)]
    assert seeds == [pick_seed(load_seed_files(str(tmp_path)), 7, i) for i in range(50)]
    assert seeds != [pick_seed(files, 8, i) for i in range(50)]
    by_path = {f.path: f.text.splitlines() for f in files}
    for s in seeds:
        assert s.source == f"dir:{tmp_path}"
        assert 1 <= s.end_line - s.start_line + 1 <= 15
        assert s.text == "\n".join(by_path[s.path][s.start_line - 1:s.end_line])


def test_bundled_seed_corpus():
    files = load_seed_files(None)
    assert len(files) >= 40 and {f.path.rsplit(".", 1)[1] for f in files} >= {"cpp", "hpp", "py"}
    assert all(f.source == "bundled" for f in files)
    assert pick_seed(files, 0, 3).text.strip()
    assert BUNDLED_SEEDS.is_dir()


def test_hf_seed_path_streams_and_shuffles(monkeypatch):
    calls = {}

    class FakeStream:
        def __init__(self, rows):
            self.rows = rows

        def shuffle(self, seed, buffer_size):
            calls["shuffle"] = (seed, buffer_size)
            return self

        def __iter__(self):
            return iter(self.rows)

    def fake_load_dataset(name, data_dir=None, split=None, streaming=False):
        calls["load"] = (name, data_dir, split, streaming)
        return FakeStream([{"content": f"line {i}\nmore {i}\n", "max_stars_repo_path": f"r/{i}.py"}
                           for i in range(10)] + [{"content": "  "}])

    monkeypatch.setitem(__import__("sys").modules, "datasets",
                        types.SimpleNamespace(load_dataset=fake_load_dataset))
    files = load_seed_files("hf:bigcode/the-stack-smol:data/python", seed=3, pool_size=4)
    assert calls["load"] == ("bigcode/the-stack-smol", "data/python", "train", True)
    assert calls["shuffle"][0] == 3
    assert [f.path for f in files] == ["r/0.py", "r/1.py", "r/2.py", "r/3.py"]
    assert files[0].source == "hf:bigcode/the-stack-smol"


# ---------------------------------------------------------------------------- prompt & parsing

def test_prompt_alternates_languages_and_embeds_seed():
    seed = pick_seed(load_seed_files(None), 0, 0)
    assert [language_for_index(("cpp", "python3"), i) for i in range(4)] == ["cpp", "python3"] * 2
    p = build_prompt(seed, "python3")
    assert seed.text in p and "Language: Python" in p and '"python3"' in p
    assert set(gemini_schema()["required"]) == set(json_schema()["properties"])
    assert json_schema()["additionalProperties"] is False


GOOD = {"problem": "Add two numbers.", "language": "cpp", "fast_solution": "```cpp\nint main(){}\n```",
        "slow_solution": "int main(){ /* slow */ }", "test_inputs": ["1 2", "3 4\n", "  "],
        "input_generator": ""}


def test_parse_pair_strips_fences_and_normalises_inputs():
    d = parse_pair("```json\n" + json.dumps(GOOD) + "\n```", "cpp")
    assert d.fast == "int main(){}" and d.language == "cpp"
    assert d.test_inputs == ["1 2\n", "3 4\n"]  # blank input dropped, newline added


@pytest.mark.parametrize("text, msg", [
    (None, "empty"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not an object"),
    (json.dumps({**GOOD, "fast_solution": ""}), "fast_solution"),
    (json.dumps({**GOOD, "language": "java"}), "does not match"),
    (json.dumps({**GOOD, "test_inputs": "1 2"}), "test_inputs"),
    (json.dumps({**GOOD, "test_inputs": []}), "no test inputs"),
    (json.dumps({**GOOD, "slow_solution": "int main(){}"}), "identical"),
])
def test_parse_pair_rejects_malformed(text, msg):
    with pytest.raises(MalformedResponse, match=msg):
        parse_pair(text, "cpp")


def test_sample_pairs_are_labelled_and_parse():
    pairs = load_sample_pairs()
    assert len(pairs) >= 30
    assert {p.language for p in pairs} == {"cpp", "python3"}
    for p in pairs:
        d = parse_pair(p.response_text(), p.language)
        assert d.problem and d.input_generator and 3 <= d.generator_count <= 5
    assert "hand" in (load_sample_pairs.__globals__["BUNDLED_SAMPLE"] / "README.md").read_text().lower()


# ---------------------------------------------------------------------------- cache

def test_cache_key_covers_every_part_and_writes_atomically(tmp_path):
    base = cache_key("gemini", "m", "p", {"t": 1})
    assert len({base, cache_key("openai", "m", "p", {"t": 1}), cache_key("gemini", "m2", "p", {"t": 1}),
                cache_key("gemini", "m", "p2", {"t": 1}), cache_key("gemini", "m", "p", {"t": 2})}) == 5
    cache = ResponseCache(tmp_path)
    assert cache.get(base) is None
    cache.put(base, {"reply": {"text": "hi"}})
    assert cache.get(base) == {"reply": {"text": "hi"}}
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------- throttling

def test_rate_limiter_spaces_requests_across_threads():
    sleeps = []
    limiter = RateLimiter(120, clock=lambda: 0.0, sleep=sleeps.append)  # frozen clock
    for _ in range(4):
        limiter.acquire()
    assert sleeps == [0.5, 1.0, 1.5]
    assert RateLimiter(None).interval == 0

    real = RateLimiter(1200)  # 50 ms apart, shared by threads
    starts = []
    threads = [threading.Thread(target=lambda: (real.acquire(), starts.append(time.monotonic())))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    starts.sort()
    assert all(b - a >= 0.045 for a, b in zip(starts, starts[1:]))


def test_retries_back_off_then_give_up():
    sleeps, calls = [], []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise TransientError("429", retry_after_s=0.25 if len(calls) == 2 else None)
        return "ok"

    kw = dict(limiter=RateLimiter(None), max_retries=5, backoff_base_s=0.1, backoff_max_s=10, sleep=sleeps.append)
    assert call_with_retries(flaky, **kw) == "ok"
    assert len(sleeps) == 2 and 0.05 <= sleeps[0] <= 0.1 and sleeps[1] >= 0.25  # Retry-After honoured

    def always():
        raise TransientError("503")

    sleeps.clear()
    with pytest.raises(TransientError):
        call_with_retries(always, **{**kw, "max_retries": 3})
    assert len(sleeps) == 3 and all(b >= a / 2 for a, b in zip(sleeps, sleeps[1:]))


# ---------------------------------------------------------------------------- config

@pytest.mark.parametrize("kw, msg", [
    ({"n": -1}, "n must be"), ({"backend": "claude"}, "backend"), ({"concurrency": 0}, "concurrency"),
    ({"requests_per_minute": 0}, "requests_per_minute"), ({"repeats": 0}, "repeats"),
    ({"languages": ("java",)}, "languages"), ({"seeds": "/nonexistent/dir"}, "seeds"),
    ({"seeds": "hf:"}, "dataset name"), ({"min_speedup": 0}, "min_speedup"),
])
def test_config_validation_names_the_bad_field(kw, msg):
    with pytest.raises(ValueError, match=msg):
        SynthConfig(**kw).validate()


def test_no_key_falls_back_to_sample(monkeypatch):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    cfg, note = resolve_backend(SynthConfig(backend="gemini"))
    assert cfg.backend == "sample" and "GEMINI_API_KEY" in note and "sample" in note
    cfg, note = resolve_backend(SynthConfig(backend="openai"))
    assert cfg.backend == "sample" and "OPENAI_API_KEY" in note
    cfg, note = resolve_backend(SynthConfig(backend="openai", base_url="http://localhost:8000/v1"))
    assert cfg.backend == "openai" and cfg.api_key == "EMPTY" and note is None  # key-less local vLLM
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    cfg, note = resolve_backend(SynthConfig(backend="gemini"))
    assert cfg.backend == "gemini" and note is None


def test_config_hash_ignores_n_and_throughput_knobs():
    a = SynthConfig(n=10, concurrency=1, repeats=3).config_hash()
    assert a == SynthConfig(n=500, concurrency=8, repeats=5, requests_per_minute=None).config_hash()
    assert a != SynthConfig(model="gemini-2.5-pro").config_hash()
    assert a != SynthConfig(seed=1).config_hash()
    assert a != SynthConfig(temperature=0.2).config_hash()


def test_pricing():
    pin, pout, known = prices_for("gemini-2.5-flash", None, None)
    assert known and estimate_cost(1_000_000, 1_000_000, pin, pout) == pytest.approx(2.80)
    assert prices_for("my-vllm-model", None, None)[2] is False
    assert prices_for("my-vllm-model", 0.0, 0.0) == (0.0, 0.0, True)


def test_tables_refuse_a_second_writer(tmp_path):
    from perfalign.perfdata.shards import OutputLocked
    from perfalign.perfdata.synth.tables import SynthTables

    first = SynthTables(tmp_path)
    with pytest.raises(OutputLocked, match="another generation run"):
        SynthTables(tmp_path)
    first.close()
    SynthTables(tmp_path).close()  # free again once the first writer is done
