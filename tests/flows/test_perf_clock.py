"""`perfalign perf build --clock` through the flow (flows/perf.py, perf.clock): every label row
carries the clock that measured it, a resumed build in the same clock goes on (Java's fallback
rows, flagged cpu, included), and a build in another clock is refused with one line.
valgrind must be installed (scripts/setup.sh)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from perfalign.perfdata import shards
from perfalign.sandbox import SandboxSettings
from perfalign.sandbox import clock as clk

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "codecontests_sample" / "data"


def test_a_build_in_counts_labels_its_rows_and_never_mixes_clocks(prefect_server, tmp_path):
    from prefect.exceptions import FailedRun

    from perfalign.config.tables import load_config
    from perfalign.flows.perf import run_build

    assert clk.valgrind_missing() is None, clk.valgrind_missing()
    perf = dataclasses.replace(load_config(overrides=["perf.clock=instructions"]).perf, source=str(SAMPLE),
                               limit_problems=1, repeats=1, max_tests=1)
    assert perf.clock == "instructions"  # the config's [perf] table is the flow's parameter
    sandbox = SandboxSettings(backend="bwrap")
    summary = run_build(str(tmp_path), perf, sandbox, workers=2)
    assert summary["failed_batches"] == 0 and summary["status"]["measured"] >= 6, summary
    rows = [r for _, t in shards.iter_shards(tmp_path, "submissions") for r in t.to_pylist()]
    measured = [r for r in rows if r["status"] == "measured"]
    for r in measured:
        if r["language"] == "java":  # the JIT: cpu, flagged
            assert r["clock"] == "cpu" and "clock_fallback:java_jit" in r["sandbox_flags"], r["sandbox_flags"]
        else:
            assert r["clock"] == "instructions" and r["test_clock_counts"][0] > 1e5, r["language"]
    assert {r["language"] for r in measured} >= {"cpp", "python3"}
    again = run_build(str(tmp_path), perf, sandbox, workers=2)  # resumes: nothing left to measure, nothing refused
    assert again["failed_batches"] == 0 and again["resumed_skipped"] >= len(measured), again
    with pytest.raises(FailedRun, match="never mixes clocks"):
        run_build(str(tmp_path), dataclasses.replace(perf, clock="cpu"), sandbox, workers=2)
