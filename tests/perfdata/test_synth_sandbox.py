"""Verification by execution with the real sandbox (auto backend: bwrap where available)."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from llm_servers import Action, OpenAIServer

from perfalign.perfdata.synth import SynthConfig, generate_synthetic
from perfalign.perfdata.synth.sample_pairs import load_sample_pairs

sandbox = pytest.importorskip("perfalign.sandbox", reason="the sandbox package is not available")


@pytest.fixture(scope="module")
def sandbox_backend() -> str:
    try:
        sb = sandbox.Sandbox(backend="auto")
    except Exception as e:  # noqa: BLE001 - any start-up failure means: cannot run here
        pytest.skip(f"no usable sandbox backend: {e}")
    return sb.backend.name


def test_bundled_sample_pairs_verify(tmp_path, sandbox_backend, monkeypatch):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    s = generate_synthetic(SynthConfig(n=2, repeats=1, min_speedup=2.0), tmp_path / "out")
    assert s.using_sample and (s.kept, s.rejected, s.failed) == (2, 0, 0), s.to_dict()
    rows = pq.read_table(tmp_path / "out" / "synthetic" / "synthetic.parquet").to_pylist()
    assert [r["language"] for r in rows] == ["cpp", "python3"]
    for r in rows:
        assert r["speedup"] >= 2.0 and r["sandbox_backend"] == sandbox_backend
        assert len(r["test_inputs"]) == len(r["slow_cpu_times_s"]) == len(r["fast_cpu_times_s"]) >= 3
        assert max(r["slow_cpu_times_s"]) <= 0.6  # budget 0.3 s, slack for a loaded machine


PY_SUM_FAST = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
PY_SUM_SLOW = ("import sys\nnums = list(map(int, sys.stdin.read().split()))\ntotal = 0\n"
               "for _ in range(300000):\n    total = 0\n    for x in nums:\n        total += x\nprint(total)\n")
CASES = {
    0: ("cpp", "int main( {", "int main() { return 0; }"),                  # compile error
    1: ("python3", PY_SUM_FAST, PY_SUM_SLOW),                                 # kept
    3: ("python3", PY_SUM_FAST.replace("sum(", "1 + sum("), PY_SUM_SLOW),     # disagreement
    5: ("python3", PY_SUM_FAST, "# same algorithm\n" + PY_SUM_FAST),          # not faster
    7: ("python3", PY_SUM_FAST, "while True:\n    pass\n"),                   # timeout
    9: ("python3", "raise SystemExit(3)\n", PY_SUM_SLOW),                     # runtime error
}


def _answers(i, rec):
    if i not in CASES:
        return Action(text="not json at all")  # the C++ slots in between: cheap rejects
    lang, fast, slow = CASES[i]
    return Action(text=json.dumps({"problem": f"case {i}", "language": lang, "fast_solution": fast,
                                   "slow_solution": slow, "test_inputs": ["1 2 3\n", "4 5\n", "6\n"],
                                   "input_generator": ""}))


def test_real_verification_outcomes(tmp_path, sandbox_backend):
    with OpenAIServer(_answers) as srv:
        cfg = SynthConfig(n=10, backend="openai", api_key="k", base_url=srv.url + "/v1", model="m",
                          requests_per_minute=None, concurrency=1, repeats=1, min_speedup=3.0, time_limit_s=0.5,
                          cache_dir=tmp_path / "cache")
        s = generate_synthetic(cfg, tmp_path / "out")
    rej_path = tmp_path / "out/synthetic_rejects/synthetic_rejects.parquet"
    rej = {r["sample_index"]: r for r in pq.read_table(rej_path).to_pylist()}
    assert {i: rej[i]["reason"] for i in CASES if i in rej} == {
        0: "compile_error", 3: "disagreement", 5: "not_faster", 7: "timeout", 9: "runtime_error"}
    assert "error" in rej[0]["detail"] and rej[0]["raw_response"]
    kept = pq.read_table(tmp_path / "out/synthetic/synthetic.parquet").to_pylist()
    assert [r["sample_index"] for r in kept] == [1] and kept[0]["speedup"] >= 3.0
    assert s.reject_reasons["malformed_response"] == 4


@pytest.mark.slow
def test_whole_bundled_sample_verifies(tmp_path, sandbox_backend):
    n = len(load_sample_pairs())
    s = generate_synthetic(SynthConfig(backend="sample", n=n, repeats=3, min_speedup=2.0), tmp_path / "out")
    assert (s.kept, s.rejected, s.failed) == (n, 0, 0), s.to_dict()
