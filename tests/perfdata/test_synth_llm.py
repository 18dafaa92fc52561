"""generate_synthetic against loopback servers speaking the Gemini and OpenAI protocols, driven by
the real google-genai and openai SDKs; execution is scripted (FakeSandbox)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from llm_servers import Action, FakeSandbox, GeminiServer, OpenAIServer, fake_program, pair_answer

from perfalign.perfdata.synth import AuthError, SynthConfig, SynthProgress, generate_synthetic
from perfalign.perfdata.synth.cache import ResponseCache

SERVERS = {"gemini": GeminiServer, "openai": OpenAIServer}


def make_config(server, backend: str, tmp_path: Path, **kw) -> SynthConfig:
    base = dict(
        n=3, backend=backend, api_key="test-key",
        base_url=server.url + ("/v1" if backend == "openai" else ""),
        model="gemini-2.5-flash" if backend == "gemini" else "test-model",
        requests_per_minute=None, backoff_base_s=0.01, backoff_max_s=0.05, request_timeout_s=5,
        concurrency=1, repeats=1, cache_dir=tmp_path / "cache",
    )
    return SynthConfig(**{**base, **kw})


def rows(out: Path, table: str = "synthetic") -> list[dict]:
    p = out / table / f"{table}.parquet"  # one directory per table (perfdata.shards)
    return pq.read_table(p).to_pylist() if p.exists() else []


# ---------------------------------------------------------------------------- structured output

@pytest.mark.parametrize("api_version, prefix", [(None, "/v1/"), ("v1beta", "/v1beta/")])
def test_gemini_structured_output(tmp_path, api_version, prefix):
    with GeminiServer() as srv:
        s = generate_synthetic(make_config(srv, "gemini", tmp_path, n=2, api_version=api_version),
                               tmp_path / "out", sandbox=FakeSandbox())
    assert [r.path for r in srv.requests] == [f"{prefix}models/gemini-2.5-flash:generateContent"] * 2
    gen = srv.requests[0].body["generationConfig"]
    assert gen["responseMimeType"] == "application/json"
    schema = gen["responseSchema"]
    assert set(schema["required"]) >= {"problem", "fast_solution", "slow_solution", "test_inputs"}
    ordering = schema.get("propertyOrdering") or schema["property_ordering"]  # the SDK sends snake_case
    assert ordering[0] == "problem" and schema["properties"]["test_inputs"]["type"] == "ARRAY"
    assert gen["seed"] != srv.requests[1].body["generationConfig"]["seed"]
    assert (s.kept, s.rejected, s.failed, s.requests) == (2, 0, 0, 2)
    assert s.prompt_tokens == 100 + 101 and s.output_tokens == 2 * 450  # thinking tokens count as output
    assert s.cost_usd == pytest.approx((201 * 0.30 + 900 * 2.50) / 1e6)
    got = rows(tmp_path / "out")
    assert [r["language"] for r in got] == ["cpp", "python3"]
    r = got[0]
    assert r["speedup"] == pytest.approx(5.0) and r["slow_cpu_times_s"] == [0.05] * 3
    assert r["request_id"] == "resp-0" and r["model_version"] == "gemini-test-001"
    assert r["seed_source"] == "bundled" and r["seed_text"] and r["seed_text"] in srv.requests[0].prompt
    assert ResponseCache(tmp_path / "cache").get(r["cache_key"])["reply"]["request_id"] == "resp-0"
    assert json.loads(r["generation_params"])["seed"] == gen["seed"]


def test_openai_structured_output(tmp_path):
    with OpenAIServer() as srv:
        s = generate_synthetic(make_config(srv, "openai", tmp_path, n=2), tmp_path / "out",
                               sandbox=FakeSandbox())
    body = srv.requests[0].body
    assert [r.path for r in srv.requests] == ["/v1/chat/completions"] * 2
    assert body["model"] == "test-model" and body["max_tokens"] == 8192
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert (s.kept, s.prompt_tokens, s.output_tokens) == (2, 240, 600)
    assert not s.price_known and "cost unknown" in str(s)
    assert [r["request_id"] for r in rows(tmp_path / "out")] == ["chatcmpl-0", "chatcmpl-1"]


# ---------------------------------------------------------------------------- retries, timeouts

@pytest.mark.parametrize("backend", ["gemini", "openai"])
def test_429_and_5xx_are_retried(tmp_path, backend):
    script = {0: Action(status=429, retry_after="0"), 1: Action(status=500), 2: Action(status=503)}
    with SERVERS[backend](script) as srv:
        s = generate_synthetic(make_config(srv, backend, tmp_path, n=2), tmp_path / "out", sandbox=FakeSandbox())
    assert [r.status for r in srv.requests] == [429, 500, 503, 200, 200]
    assert (s.kept, s.failed, s.retries, s.requests) == (2, 0, 3, 2)


@pytest.mark.parametrize("backend", ["gemini", "openai"])
def test_timeout_is_retried(tmp_path, backend):
    with SERVERS[backend]({0: Action(delay_s=1.5)}) as srv:
        s = generate_synthetic(make_config(srv, backend, tmp_path, n=1, request_timeout_s=0.5),
                               tmp_path / "out", sandbox=FakeSandbox())
    assert len(srv.requests) == 2 and (s.kept, s.retries) == (1, 1)


def test_exhausted_retries_fail_the_sample_without_recording_it(tmp_path):
    with OpenAIServer(lambda n, rec: Action(status=503) if "Language: C++" in rec.prompt else None) as srv:
        cfg = make_config(srv, "openai", tmp_path, n=2, max_retries=1)
        s = generate_synthetic(cfg, tmp_path / "out", sandbox=FakeSandbox())
    assert (s.kept, s.failed) == (1, 1) and "503" in s.failures[0]
    assert len(rows(tmp_path / "out")) == 1 and not rows(tmp_path / "out", "synthetic_rejects")
    with OpenAIServer() as srv:  # the endpoint recovers: a rerun does only the failed sample
        cfg.base_url = srv.url + "/v1"
        s = generate_synthetic(cfg, tmp_path / "out", sandbox=FakeSandbox())
    assert len(srv.requests) == 1 and (s.kept, s.skipped_existing, s.total_kept) == (1, 1, 2)


def test_auth_error_aborts_with_a_clear_error(tmp_path):
    with GeminiServer(lambda n, rec: Action(status=403)) as srv:
        with pytest.raises(AuthError, match="API key"):
            generate_synthetic(make_config(srv, "gemini", tmp_path, n=3), tmp_path / "out", sandbox=FakeSandbox())
    assert len(srv.requests) == 1  # no retries, no further samples


# ---------------------------------------------------------------------------- rejects

def test_malformed_responses_become_rejects_with_the_raw_text(tmp_path):
    missing = json.dumps({"problem": "p", "language": "cpp"})
    script = {0: Action(text="{this is not json"), 1: Action(text=missing),
              2: Action(text='```json\n' + pair_answer("Language: C++") + '\n```')}
    with OpenAIServer(script) as srv:
        s = generate_synthetic(make_config(srv, "openai", tmp_path, n=3, languages=("cpp",)),
                               tmp_path / "out", sandbox=FakeSandbox())
    assert (s.kept, s.rejected, s.reject_reasons) == (1, 2, {"malformed_response": 2})
    rej = rows(tmp_path / "out", "synthetic_rejects")
    assert [r["raw_response"] for r in rej] == ["{this is not json", missing]
    assert "not valid JSON" in rej[0]["detail"] and "fast_solution" in rej[1]["detail"]
    assert all(r["cache_key"] and r["problem"] is None for r in rej)


def _answer(kw: dict):
    return lambda n, rec: Action(text=pair_answer(rec.prompt, **kw.get(n, {})))


def test_verification_outcomes(tmp_path):
    cases = {
        0: {"fast": fake_program(verdict="COMPILE_ERROR")},
        1: {"fast": fake_program("sum+1", 0.01)},
        2: {"fast": fake_program("sum", 0.045)},                       # 0.05 / 0.045 < 1.2
        3: {"slow": fake_program(verdict="TIME_LIMIT_EXCEEDED")},
        4: {"slow": fake_program(verdict="RUNTIME_ERROR")},
        5: {"slow": fake_program("empty", 0.05), "fast": fake_program("empty", 0.01)},
        6: {"inputs": [], "generator": fake_program("gen")},           # inputs from the generator
        7: {"inputs": [], "generator": fake_program(verdict="RUNTIME_ERROR")},
    }
    sb = FakeSandbox()
    with OpenAIServer(_answer(cases)) as srv:
        s = generate_synthetic(make_config(srv, "openai", tmp_path, n=8, repeats=2), tmp_path / "out", sandbox=sb)
    rej = {r["sample_index"]: r for r in rows(tmp_path / "out", "synthetic_rejects")}
    assert {i: r["reason"] for i, r in rej.items()} == {
        0: "compile_error", 1: "disagreement", 2: "not_faster", 3: "timeout", 4: "runtime_error",
        5: "empty_output", 7: "generator_error"}
    assert "expected ';'" in rej[0]["detail"] and "fast" in rej[0]["detail"]
    assert "'7\\n'" in rej[1]["detail"]  # slow printed 1+2+4... shown with the fast output
    assert rej[2]["speedup"] == pytest.approx(0.15 / 0.135)
    assert all(json.loads(r["raw_response"])["problem"] for r in rej.values())
    kept = rows(tmp_path / "out")
    assert [r["sample_index"] for r in kept] == [6]
    assert kept[0]["test_inputs"] == ["0\n", "0 1\n", "0 1 2\n", "0 1 2 3\n", "0 1 2 3 4\n"]
    assert s.reject_reasons["timeout"] == 1 and s.kept == 1
    # the two generators run once, solutions `repeats` times
    assert sorted(j.repeats for j in sb.jobs).count(1) == 2 and {j.repeats for j in sb.jobs} == {1, 2}


# ---------------------------------------------------------------------------- cache, resume, limits

def test_rerun_uses_cache_and_extends_incrementally(tmp_path):
    out = tmp_path / "out"
    with GeminiServer() as srv:
        cfg = make_config(srv, "gemini", tmp_path, n=3)
        generate_synthetic(cfg, out, sandbox=FakeSandbox())
        s = generate_synthetic(cfg, out, sandbox=FakeSandbox())  # same n: nothing to do
        assert len(srv.requests) == 3 and (s.skipped_existing, s.attempted) == (3, 0)
        cfg.n = 5
        s = generate_synthetic(cfg, out, sandbox=FakeSandbox())
        assert len(srv.requests) == 5 and (s.kept, s.total_kept) == (2, 5)
        (out / "synthetic" / "synthetic.parquet").unlink()  # tables lost, cache kept: rebuilt for free
        s = generate_synthetic(cfg, out, sandbox=FakeSandbox())
        assert len(srv.requests) == 5 and (s.cache_hits, s.requests, s.cost_usd) == (5, 0, 0.0)
    keys = [r["key"] for r in rows(out)]
    assert len(keys) == len(set(keys)) == 5
    assert len(set(srv.answered_bodies())) == 5


def test_concurrency_and_rate_limits(tmp_path):
    with OpenAIServer(lambda n, rec: Action(delay_s=0.2)) as srv:
        s = generate_synthetic(make_config(srv, "openai", tmp_path, n=6, concurrency=2), tmp_path / "o1",
                               sandbox=FakeSandbox())
    assert srv.max_in_flight == 2 and s.kept == 6
    with OpenAIServer() as srv:
        generate_synthetic(make_config(srv, "openai", tmp_path, n=4, concurrency=4, requests_per_minute=600,
                                       cache_dir=tmp_path / "c2"), tmp_path / "o2", sandbox=FakeSandbox())
    # 600/min: releases 0.1 s apart (the limiter's exact spacing is a unit test with a frozen clock).
    # Arrivals jitter under load, so the end-to-end check is on the span: 4 requests cannot arrive
    # within 0.2 s of each other unless the limiter let them go early.
    starts = sorted(r.started for r in srv.requests)
    assert len(starts) == 4 and starts[-1] - starts[0] >= 0.2, starts


def test_progress_callback_and_common_progress(tmp_path):
    from perfalign.common.progress import listening

    events: list[SynthProgress] = []
    with OpenAIServer() as srv:
        generate_synthetic(make_config(srv, "openai", tmp_path, n=2), tmp_path / "out", sandbox=FakeSandbox(),
                           progress=events.append)
        reports = []
        with listening(lambda *a: reports.append(a)):
            generate_synthetic(make_config(srv, "openai", tmp_path, n=3), tmp_path / "out", sandbox=FakeSandbox())
        assert reports == [("synthetic pairs", 1, 1)]
    assert [(e.done, e.total, e.kept) for e in events] == [(1, 2, 1), (2, 2, 2)]
    assert "kept" in events[-1].last


def test_without_a_key_the_sample_is_used_and_said_so(tmp_path, monkeypatch):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    pairs = tmp_path / "sample" / "pairs"
    for i, lang in enumerate(["cpp", "python3", "cpp"]):
        d = pairs / f"{i:02d}_fake"
        d.mkdir(parents=True)
        (d / "meta.json").write_text(json.dumps({"language": lang, "inputs": 3}))
        (d / "problem.md").write_text(f"Problem {i}")
        ext = "cpp" if lang == "cpp" else "py"
        (d / f"fast.{ext}").write_text(fake_program("sum", 0.01))
        (d / f"slow.{ext}").write_text(fake_program("sum", 0.03))
        (d / "gen.py").write_text(fake_program("gen"))
    s = generate_synthetic(SynthConfig(n=10, sample_dir=tmp_path / "sample", repeats=1), tmp_path / "out",
                           sandbox=FakeSandbox())
    assert s.using_sample and s.backend == "sample" and s.model == "hand-written-sample"
    assert any("GEMINI_API_KEY" in n and "sample" in n for n in s.notes)
    assert any("capped" in n for n in s.notes) and s.target == 3 and s.kept == 3
    assert "sample" in str(s).lower() and s.requests == 0
    got = rows(tmp_path / "out")
    assert {r["backend"] for r in got} == {"sample"} and got[0]["cache_key"] == "sample:00_fake"
    assert got[1]["language"] == "python3" and got[0]["test_inputs"] == ["0\n", "0 1\n", "0 1 2\n"]


def test_bad_config_is_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="backend"):
        generate_synthetic(SynthConfig(backend="nope"), tmp_path / "out")
    assert not (tmp_path / "out").exists()
