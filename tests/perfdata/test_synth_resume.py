"""Crash safety: a generation process killed with SIGKILL mid-run, then rerun, loses and
duplicates nothing, and never pays for the same request twice."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from llm_servers import Action, OpenAIServer

TESTS_DIR = Path(__file__).resolve().parents[1] / "fixtures"  # llm_servers for the subprocess
RUNNER = """
import json, sys
from pathlib import Path
from llm_servers import FakeSandbox
from perfalign.perfdata.synth import SynthConfig, generate_synthetic
url, out, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
cfg = SynthConfig(n=n, backend="openai", api_key="k", base_url=url, model="m", concurrency=1,
                  requests_per_minute=None, repeats=1, backoff_base_s=0.01, cache_dir=out / "cache")
print(json.dumps(generate_synthetic(cfg, out, sandbox=FakeSandbox()).to_dict()))
"""


def _runner(url: str, out: Path, n: int) -> list[str]:
    return [sys.executable, "-c", RUNNER, url, str(out), str(n)]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}


def _journal_lines(out: Path) -> int:
    p = out / ".synthetic.journal.jsonl"
    return len(p.read_text().splitlines()) if p.exists() else 0


def test_resume_after_sigkill(tmp_path):
    out, n, hang_at = tmp_path / "out", 8, 5
    with OpenAIServer(lambda i, rec: Action(hang=True) if i == hang_at else None) as srv:
        proc = subprocess.Popen(_runner(srv.url + "/v1", out, n), env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            assert srv.hung.wait(30), proc.stderr.read().decode() if proc.poll() is not None else "no hang"
            deadline = time.monotonic() + 10
            while _journal_lines(out) < hang_at and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        first = srv.answered_bodies()
    assert len(first) == hang_at and _journal_lines(out) == hang_at
    assert not (out / "synthetic" / "synthetic.parquet").exists()  # only the journal holds the rows
    with open(out / ".synthetic.journal.jsonl", "a") as f:
        f.write('{"table": "synthetic", "row": {"key": "torn')  # a write cut short by the kill

    with OpenAIServer() as srv:
        done = subprocess.run(_runner(srv.url + "/v1", out, n), env=_env(), capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        second = srv.answered_bodies()
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["skipped_existing"], summary["kept"], summary["total_kept"]) == (hang_at, n - hang_at, n)
    assert len(second) == n - hang_at  # only the request that never got an answer, and the rest
    assert len(set(first + second)) == len(first) + len(second)  # no request answered twice

    table = pq.read_table(out / "synthetic" / "synthetic.parquet").to_pylist()
    assert sorted(r["sample_index"] for r in table) == list(range(n))
    assert len({r["key"] for r in table}) == n and len({r["cache_key"] for r in table}) == n
    assert _journal_lines(out) == 0
