"""Preflight checks fail in one line before any flow starts (a Hub source offline
would give 25 s of retries, each warning printed twice, then 285 lines with two tracebacks)."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hub_server import Repo, hub_server

from perfalign.cli import preflight
from perfalign.cli.preflight import PreflightError, check_gpu, check_hub_dataset, check_sources

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket closes


def _cli(args, tmp_path, **env):
    full = dict(os.environ, PERFALIGN_HOME=str(tmp_path / "home"), COLUMNS="80", **env)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "perfalign.cli", *args], cwd=tmp_path, env=full,
                       capture_output=True, text=True, timeout=600)
    return p, time.monotonic() - t0


def _lines(p) -> list[str]:
    return [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]


@pytest.mark.parametrize("env", [
    {"HF_HUB_OFFLINE": "1"},
    {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"},
], ids=["offline", "unreachable"])
def test_hub_source_that_cannot_be_read_fails_in_one_line(tmp_path, env):
    p, _ = _cli(["perf", "build", "--source", "hf:no/such_dataset", "--out", str(tmp_path / "out"),
                 "--limit-problems", "1"], tmp_path, **env)
    lines = _lines(p)
    assert p.returncode == 2, lines
    assert len(lines) == 1, "\n".join(lines)
    assert lines[0].startswith("error: source 'hf:no/such_dataset'")
    assert ("HF_HUB_OFFLINE" in lines[0]) if env["HF_HUB_OFFLINE"] == "1" else ("cannot reach" in lines[0])
    assert not (tmp_path / "out").exists()  # no flow started, nothing written


def test_hub_dataset_checked_against_the_hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with hub_server() as srv:
        monkeypatch.setenv("HF_ENDPOINT", srv.url)
        srv.repos[("dataset", "org/present")] = Repo("dataset", "org/present", False, files={"a.parquet": b"x"})
        check_hub_dataset("hf:org/present:train")  # exists: no error
        with pytest.raises(PreflightError, match=r"no dataset 'org/missing'"):
            check_hub_dataset("hf:org/missing")
        assert len(srv.calls("GET", r"/api/datasets/org/missing")) == 1  # one request, no retries


def test_offline_with_the_dataset_cached_passes(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(PreflightError, match="HF_HUB_OFFLINE"):
        check_hub_dataset("hf:org/cached")
    (tmp_path / "datasets--org--cached" / "snapshots").mkdir(parents=True)
    check_hub_dataset("hf:org/cached")


def test_missing_local_source_and_gpu_stage_without_gpu(tmp_path):
    with pytest.raises(PreflightError, match="does not exist"):
        check_sources([("--source", str(tmp_path / "nope"))])

    class Stage:
        use_cpu = False

    import torch

    if torch.cuda.is_available():
        check_gpu({"sft": Stage()})
    else:
        with pytest.raises(PreflightError, match=r"stages sft .*no CUDA device"):
            check_gpu({"sft": Stage(), "dpa": None})
    check_gpu({"sft": type("Cpu", (), {"use_cpu": True})()})


def test_missing_judge_environments_fail_a_production_build(monkeypatch, tmp_path):
    from perfalign.sandbox import environments

    monkeypatch.setattr(environments, "ENV_DIR", tmp_path)
    environments.python3_libs.cache_clear()
    try:
        with pytest.raises(PreflightError, match="judge environments missing: judge Python 3 libraries not installed"):
            preflight.check_judges(required=True)
        preflight.check_judges(required=False)  # a warning only
    finally:
        environments.python3_libs.cache_clear()
