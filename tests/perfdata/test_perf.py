"""CodeContests-Perf: loading with error records, the Prefect flow, resume after kill -9,
incremental builds, Dask, and the dataset loading back with `datasets`."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perfalign.perfdata import shards
from perfalign.perfdata.codecontests import iter_problems
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.perf_build import build
from perfalign.perfdata.records import ErrorRecord, Problem
from perfalign.perfdata.schema import arrow_schema

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "codecontests_sample" / "data"


def _sample_rows(n):
    rows = pq.read_table(SAMPLE / "train-00000-of-00001.parquet").to_pylist()
    return rows[:n]


def _keys(out):
    table = shards.read_table(out, "submissions", arrow_schema("submissions"), ["submission_key"])
    return table.column("submission_key").to_pylist()


def test_malformed_rows_become_error_records(tmp_path):
    good, other = _sample_rows(2)
    bad_missing = {k: v for k, v in other.items() if k != "description"}
    bad_tests = dict(other, name="mismatch", public_tests={"input": ["1"], "output": []})
    bad_lang = dict(good, name="badlang", solutions={"language": ["C++?", 3], "solution": ["x", "print(1)"]})
    src = tmp_path / "train.jsonl"
    with open(src, "w") as f:
        for row in (good, bad_missing, bad_tests, bad_lang):
            f.write(json.dumps(row) + "\n")
        f.write("{not json\n")
    # undecodable code arrives as bytes from a binary Parquet column: kept losslessly (not an error)
    table = pa.table({"name": ["bytes-problem"], "description": ["d"],
                      "public_tests": [{"input": ["1\n"], "output": ["1\n"]}],
                      "solutions": [{"language": [3, 3], "solution": [b"print(1)\n", b"\xff\xfe bad"]}]},
                     schema=pa.schema([("name", pa.string()), ("description", pa.string()),
                                       ("public_tests", pa.struct([("input", pa.list_(pa.string())),
                                                                   ("output", pa.list_(pa.string()))])),
                                       ("solutions", pa.struct([("language", pa.list_(pa.int64())),
                                                                ("solution", pa.list_(pa.binary()))]))]))
    pq.write_table(table, tmp_path / "valid.parquet")
    items = list(iter_problems(str(tmp_path)))
    errors = [i for i in items if isinstance(i, ErrorRecord)]
    problems = [i for i in items if isinstance(i, Problem)]
    reasons = " | ".join(e.reason for e in errors)
    assert "missing field 'description'" in reasons
    assert "1 inputs but 0 outputs" in reasons
    assert "invalid JSON" in reasons
    assert "language id 'C++?'" in reasons
    assert {p.name for p in problems} == {good["name"], "badlang", "bytes-problem"}
    raw = next(p for p in problems if p.name == "bytes-problem").submissions[1]
    assert raw.raw_bytes == b"\xff\xfe bad" and not raw.is_utf8
    # the build goes on and keeps every error as a record
    out = tmp_path / "out"
    summary = build(str(tmp_path), out, BuildSettings(repeats=1, max_tests=2, batch_size=4), workers=2)
    assert summary.errors == len(errors) == 4
    errs = shards.read_table(out, "errors", arrow_schema("errors")).to_pylist()
    assert sorted(e["reason"] for e in errs) == sorted(e.reason for e in errors)
    assert summary.status.get("measured", 0) >= 2


@pytest.fixture(scope="module")
def flow_build(prefect_server, tmp_path_factory):
    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import run_build

    out = tmp_path_factory.mktemp("ccperf")
    summary = run_build(str(out), PerfSettings(source=str(SAMPLE), limit_problems=2, repeats=2, max_tests=3), workers=2)
    return out, summary


def test_a_rerun_with_nothing_to_measure_needs_no_prefect_server(flow_build, tmp_path):
    """`perfalign perf build` over a finished output answers from the output alone: no flow, no
    server (its start-up was most of a no-op's time); changed settings still run the flow."""
    import shutil

    from typer.testing import CliRunner

    from perfalign.cli.main import app
    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import already_built

    out, summary = flow_build
    args = ["perf", "build", "--out", str(out), "--source", str(SAMPLE), "--limit-problems", "2", "--repeats", "2",
            "--max-tests", "3", "--workers", "2", "--json"]
    nowhere = {"PREFECT_API_URL": "http://127.0.0.1:9/api"}  # a flow run would fail to reach it
    res = CliRunner().invoke(app, args, env=nowhere)
    assert res.exit_code == 0, res.output
    again = json.loads(res.output.strip().splitlines()[-1])
    for key in ("problems", "submissions", "status", "by_language", "test_executions"):
        assert again[key] == summary[key], key
    assert again["resumed_skipped"] >= summary["status"]["measured"]  # all skipped, none measured again
    changed = tmp_path / "changed"
    shutil.copytree(out, changed)
    changed_settings = PerfSettings(source=str(SAMPLE), limit_problems=2, repeats=3, max_tests=3)
    assert already_built(str(changed), changed_settings) is None


def test_flow_builds_a_loadable_dataset(flow_build):
    import datasets

    out, summary = flow_build
    assert summary["problems"] == 2 and summary["failed_batches"] == 0
    assert summary["status"]["measured"] >= 10 and summary["status"]["not_run"] >= 2
    assert summary["status"].get("rejected", 0) == 0  # the sample's labels hold
    subs = datasets.load_dataset(str(out), split="train")  # default config: submissions
    assert subs.num_rows == summary["submissions"]
    for row in subs:
        if row["is_correct"]:
            assert row["status"] == "measured" and row["verdict"] == "OK"
            assert len(row["test_cpu_times_s"]) == 3 and all(len(r) == 2 for r in row["test_cpu_repeats_s"])
            assert row["runtime_s"] == pytest.approx(sum(row["test_cpu_times_s"]) / 3)
            assert row["calibration_cpu_s"] > 0 and row["isolated"]
        else:
            assert row["status"] == "not_run" and row["runtime_s"] is None
    probs = datasets.load_dataset(str(out), "problems", split="train")
    assert probs.num_rows == 2 and len(probs[0]["test_inputs"]) == 3
    card = (out / "README.md").read_text()
    assert "configs:" in card and "runtime_s" in card
    assert "config_name: rejects" not in card  # empty tables get no config


def test_incremental_build_runs_only_what_is_missing(flow_build):
    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import run_build

    out, first = flow_build
    before = _keys(out)
    summary = run_build(str(out), PerfSettings(source=str(SAMPLE), limit_problems=3, repeats=2, max_tests=3), workers=2)
    after = _keys(out)
    assert summary["resumed_skipped"] == len(before)
    assert len(after) == len(set(after)) > len(before)
    assert set(before) <= set(after)
    assert summary["problems"] == 3


def test_kill_9_and_resume(prefect_server, tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "perfalign.cli", "perf", "build", "--source", str(SAMPLE), "--out", str(out),
           "--limit-problems", "3", "--repeats", "1", "--max-tests", "4", "--batch-size", "2", "--workers", "1",
           "--json"]
    env = dict(os.environ, PREFECT_API_URL=prefect_server)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while len(shards.shard_files(out, "submissions")) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _keys(out)
    assert partial, "the build should have committed something before the kill"
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    keys = _keys(out)
    assert len(keys) == len(set(keys)), "no duplicates after resume"
    assert set(partial) <= set(keys), "nothing lost"
    assert summary["resumed_skipped"] >= len(partial) - 2  # committed work was not redone
    # the same build from scratch gives the same set of submissions
    fresh = tmp_path / "fresh"
    ref = build(str(SAMPLE), fresh, BuildSettings(repeats=1, max_tests=4, batch_size=2), limit_problems=3)
    assert sorted(keys) == sorted(_keys(fresh))
    assert ref.submissions == summary["submissions"]
    assert not list(out.glob("**/.*.tmp"))


def test_dask_local_cluster(prefect_server, tmp_path):
    from distributed import LocalCluster

    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import run_build

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        summary = run_build(str(tmp_path), PerfSettings(source=str(SAMPLE), limit_problems=1, repeats=1, max_tests=2),
                            dask_address=cluster.scheduler_address)
    assert summary["failed_batches"] == 0
    assert summary["status"]["measured"] >= 5
