"""Dataset card + Hub publishing, end to end against a loopback Hub (no network, no mocks)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hub_server import hub_server
from huggingface_hub import HfApi
from huggingface_hub import constants as hf_constants

from perfalign.perfdata import shards
from perfalign.perfdata.dataset_card import write_dataset_card
from perfalign.perfdata.publish import PublishError, publish_dataset

TOKEN = "hf_loopback_test_token"

ROWS = {
    "problems": [
        {"problem_id": "p1", "statement": "Sum two numbers.", "time_limit_s": 1.0},
        {"problem_id": "p2", "statement": "Sort | dedupe.", "time_limit_s": 2.5},
    ],
    "submissions": [
        {"submission_id": i, "problem_id": f"p{1 + i % 2}", "language": "cpp", "cpu_time_ms": 10.0 * i}
        for i in range(5)
    ],
    "rejects": [{"submission_id": 99, "reason": "compile error"}],
}
SCHEMAS = {
    "problems": [("problem_id", "string", "id"), ("statement", "string", "text"), ("time_limit_s", "float64", "s")],
    "submissions": [("submission_id", "int64", "id"), ("problem_id", "string", "problem"),
                    ("language", "string", "lang"), ("cpu_time_ms", "float64", "median CPU time")],
    "rejects": [("submission_id", "int64", "id"), ("reason", "string", "why it was rejected")],
}


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    """A dataset folder: each table in its own directory (submissions in two shards) and a card."""
    out = tmp_path / "ds"
    for name, rows in ROWS.items():
        (out / name).mkdir(parents=True)
        shards = [rows[:3], rows[3:]] if name == "submissions" else [rows]
        for i, shard in enumerate(shards):
            pq.write_table(pa.Table.from_pylist(shard), out / name / f"train-{i:05d}-of-{len(shards):05d}.parquet")
    # Junk an interrupted writer or a cache could leave behind: must not be uploaded.
    (out / "submissions" / "train-00002.parquet.tmp").write_bytes(b"partial")
    (out / ".cache").mkdir()
    (out / ".cache" / "x.parquet").write_bytes(b"not parquet")
    (out / "submissions" / ".lock").write_text("")
    write_dataset_card(
        out,
        title="Perf test set",
        description="Tiny fixture dataset.",
        tables={n: {"data_files": f"{n}/*.parquet", "description": f"the {n} table", "schema": SCHEMAS[n]}
                for n in ROWS},
        extra_markdown="## Citation\n\nNone yet.",
    )
    return out


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A loopback Hub, with huggingface_hub in this process pointed at it and isolated from ~/.cache."""
    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    # huggingface_hub reads these at import time, so setting the env vars above is not enough in-process.
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_XET", True)  # xet needs a CAS server: use plain LFS
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(home / "token"))  # no stored token of the user
    monkeypatch.setattr(hf_constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"))
    with hub_server() as srv:
        monkeypatch.setenv("HF_ENDPOINT", srv.url)
        monkeypatch.setattr(hf_constants, "ENDPOINT", srv.url)  # e.g. the agent-harness registry fetch
        yield srv
    assert not srv.unknown, f"client called routes the loopback hub lacks: {srv.unknown}"


def run_load(path_or_repo: str, configs: list[str | None], env: dict) -> subprocess.CompletedProcess:
    """datasets.load_dataset(path_or_repo, config)["train"] for each config, in a fresh process: datasets
    and huggingface_hub fix their endpoint, offline flag and cache paths at import time, so a
    subprocess with its env set is the reliable way to point them at the loopback Hub.
    Prints {config: rows} as JSON (config "" = the default one)."""
    code = (
        "import json, sys, datasets\n"
        "out = {c: datasets.load_dataset(sys.argv[1], c or None)['train'].to_list() for c in sys.argv[2:]}\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "HF_UPDATE_DOWNLOAD_COUNTS": "0", "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", **env}
    cmd = [sys.executable, "-c", code, path_or_repo] + [c or "" for c in configs]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def load_rows(path_or_repo: str, configs: list[str | None], env: dict) -> dict[str | None, list[dict]]:
    proc = run_load(path_or_repo, configs, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {c or None: rows for c, rows in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def by_key(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def test_card_front_matter_and_schema_docs(dataset_dir: Path):
    text = (dataset_dir / "README.md").read_text()
    front = text.split("---\n")[1]
    assert "config_name: problems" in front and "default: true" in front
    assert front.count("default: true") == 1
    assert "path: rejects/*.parquet" in front and "license: cc-by-4.0" in front
    assert "| `cpu_time_ms` | `float64` | median CPU time |" in text
    assert "## Citation" in text


def test_card_rejects_glob_matching_nothing(tmp_path: Path):
    with pytest.raises(ValueError, match="matches no file"):
        write_dataset_card(tmp_path, title="t", description="d",
                           tables={"x": {"data_files": "x/*.parquet", "description": "", "schema": []}})


def test_local_folder_loads(dataset_dir: Path, tmp_path: Path):
    env = {"HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_OFFLINE": "1"}  # offline: proves it is all local
    loaded = load_rows(str(dataset_dir), [None, "rejects", "submissions"], env)
    assert by_key(loaded[None]) == by_key(ROWS["problems"])  # the default config
    assert loaded["rejects"] == ROWS["rejects"]
    assert by_key(loaded["submissions"]) == by_key(ROWS["submissions"])  # both shards, no .tmp junk


def test_publish_private_and_load_back(dataset_dir: Path, hub, tmp_path: Path):
    url = publish_dataset(dataset_dir, "perf-org/perf-test", private=True, token=TOKEN, endpoint=hub.url)
    assert url == f"{hub.url}/datasets/perf-org/perf-test"

    (create,) = hub.calls("POST", r"^/api/repos/create$")
    assert create.json() == {"name": "perf-test", "organization": "perf-org", "visibility": "private",
                             "type": "dataset"}
    assert create.headers["authorization"] == f"Bearer {TOKEN}"
    assert len(hub.calls("PUT", r"^/lfs-upload/")) == 4  # every parquet file went through LFS
    repo = hub.repos[("dataset", "perf-org/perf-test")]
    assert repo.private
    assert sorted(repo.files) == ["README.md"] + sorted(p.relative_to(dataset_dir).as_posix()
                                                         for p in dataset_dir.glob("[!.]*/*.parquet"))
    assert repo.lfs_paths == {p for p in repo.files if p.endswith(".parquet")}

    env = {"HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_OFFLINE": "0",
           "HF_HOME": str(tmp_path / "hf_home_load"), "HF_TOKEN": TOKEN}
    loaded = load_rows("perf-org/perf-test", [*ROWS, None], env)
    for name in ROWS:
        assert by_key(loaded[name]) == by_key(ROWS[name]), name
    assert by_key(loaded[None]) == by_key(ROWS["problems"])
    assert hub.calls("GET",
                     r"^/datasets/perf-org/perf-test/resolve/[0-9a-f]{40}/rejects/train-00000-of-00001\.parquet$")

    # Without a token the private repo is invisible.
    proc = run_load("perf-org/perf-test", ["rejects"], {**env, "HF_TOKEN": "", "HF_HOME": str(tmp_path / "h2")})
    assert proc.returncode != 0 and "DatasetNotFoundError" in proc.stderr


def test_republish_replaces_stale_shards(dataset_dir: Path, hub):
    publish_dataset(dataset_dir, "perf-org/again", token=TOKEN, endpoint=hub.url)
    for p in (dataset_dir / "submissions").glob("*.parquet"):
        p.unlink()
    pq.write_table(pa.Table.from_pylist(ROWS["submissions"][:1]), dataset_dir / "submissions" / "all.parquet")
    publish_dataset(dataset_dir, "perf-org/again", token=TOKEN, endpoint=hub.url)
    repo = hub.repos[("dataset", "perf-org/again")]
    assert [p for p in repo.files if "submissions" in p] == ["submissions/all.parquet"]
    assert not repo.private and len(repo.commits) == 2
    info = HfApi(endpoint=hub.url).get_paths_info("perf-org/again", ["submissions/all.parquet", "submissions"],
                                                  repo_type="dataset")
    by_type = {type(i).__name__: i for i in info}
    assert by_type["RepoFolder"].path == "submissions" and by_type["RepoFile"].path == "submissions/all.parquet"
    blob = (dataset_dir / "submissions" / "all.parquet").read_bytes()
    assert by_type["RepoFile"].lfs.sha256 == hashlib.sha256(blob).hexdigest()


def test_hub_rejects_broken_card_yaml(dataset_dir: Path, hub):
    card = dataset_dir / "README.md"
    card.write_text(card.read_text().replace("configs:", "configs: [", 1))
    with pytest.raises(ValueError, match="Invalid metadata"):
        publish_dataset(dataset_dir, "perf-org/broken", token=TOKEN, endpoint=hub.url)
    assert hub.calls("POST", "^/api/validate-yaml$") and not hub.calls("POST", "/commit/")


def test_bare_name_goes_to_token_namespace(dataset_dir: Path, hub):
    url = publish_dataset(dataset_dir, "solo", token=TOKEN, endpoint=hub.url)
    assert url.endswith("/datasets/tester/solo") and ("dataset", "tester/solo") in hub.repos


def test_token_from_env(dataset_dir: Path, hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    publish_dataset(dataset_dir, "perf-org/env-token", endpoint=hub.url)
    (create,) = hub.calls("POST", r"^/api/repos/create$")
    assert create.headers["authorization"] == "Bearer hf_from_env"


def test_errors(dataset_dir: Path, hub, tmp_path: Path):
    with pytest.raises(PublishError, match="not found"):
        publish_dataset(tmp_path / "nope", "org/x", token=TOKEN, endpoint=hub.url)
    no_card = tmp_path / "no_card"
    (no_card / "rejects").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(ROWS["rejects"]), no_card / "rejects" / "rejects.parquet")
    with pytest.raises(PublishError, match="README.md"):
        publish_dataset(no_card, "org/x", token=TOKEN, endpoint=hub.url)
    no_parquet = tmp_path / "no_parquet"
    (no_parquet / ".cache").mkdir(parents=True)
    (no_parquet / "README.md").write_text("---\nlicense: mit\n---\n")
    (no_parquet / "data.parquet.tmp").write_bytes(b"x")  # ignored files do not count
    (no_parquet / ".cache" / "old.parquet").write_bytes(b"x")
    with pytest.raises(PublishError, match="no parquet"):
        publish_dataset(no_parquet, "org/x", token=TOKEN, endpoint=hub.url)
    for bad in ["", "a/b/c", "/name", "org/", "org name/x", "org/na--me", "-x"]:
        with pytest.raises(PublishError, match="invalid repo id"):
            publish_dataset(dataset_dir, bad, token=TOKEN, endpoint=hub.url)
    # The real Hub without any token: refused before any network call.
    with pytest.raises(PublishError, match="no Hugging Face token"):
        publish_dataset(dataset_dir, "org/x", endpoint="https://huggingface.co/")
    assert hub.requests == []


def test_cli_publishes_a_codecontests_perf_build(hub, tmp_path: Path):
    """`perfalign publish` on a real build folder, then load it back through the Hub."""
    from perfalign.perfdata.perf import BuildSettings
    from perfalign.perfdata.perf_build import build

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "ccperf"
    summary = build(str(root / "data" / "codecontests_sample" / "data"), out,
                    BuildSettings(repeats=1, max_tests=1), limit_problems=1)
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_OFFLINE": "0",
           "HF_HOME": str(tmp_path / "hf_cli"), "HF_TOKEN": TOKEN}
    p = subprocess.run([sys.executable, "-m", "perfalign.cli", "publish", "--repo-id", "perf-org/ccperf",
                        "--path", str(out), "--private"], cwd=root, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert hub.repos[("dataset", "perf-org/ccperf")].private
    loaded = load_rows("perf-org/ccperf", [None, "problems"], {**env, "HF_HOME": str(tmp_path / "hf_load")})
    assert len(loaded[None]) == summary.submissions
    local = {r["submission_key"] for f in shards.shard_files(out, "submissions")
             for r in pq.read_table(f, columns=["submission_key"]).to_pylist()}
    assert {r["submission_key"] for r in loaded[None]} == local
    assert len(loaded["problems"]) == 1 and loaded["problems"][0]["problem_id"] == loaded[None][0]["problem_id"]


def test_only_the_files_the_card_names_are_published(dataset_dir: Path, hub):
    """A Parquet file beside the tables that no config of the card names (the controlled task's
    training-only shards in a triplets folder) is not published: a reader of the card could not
    find it, and a reader of the folder would mix it into a table."""
    import shutil

    from perfalign.perfdata.publish import files_to_upload

    named = files_to_upload(dataset_dir)
    (dataset_dir / "extra").mkdir()
    shutil.copy(dataset_dir / named[-1], dataset_dir / "extra" / "controlled.parquet")
    assert files_to_upload(dataset_dir) == named and "README.md" in named and len(named) > 1
    publish_dataset(dataset_dir, "perf-org/named", token=TOKEN, endpoint=hub.url)
    assert sorted(hub.repos[("dataset", "perf-org/named")].files) == sorted(named)
