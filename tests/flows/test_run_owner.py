"""A run's state stays true after any death, and runs of two profiles never mix: a running stage
records its process (host, boot, PID, start time); once that process is gone `perfalign status`
shows the stage interrupted with how to resume (no invented result), the next run stores it so,
and the command's Prefect flow runs are marked Crashed; a run directory made by another profile
is refused unless asked for."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from perfalign.cli.status import status_table
from perfalign.flows.runstate import (
    RunDirConflict,
    RunState,
    check_run_dir,
    list_runs,
    orphans_in_local_db,
    owner_alive,
    owner_tag,
    process_owner,
)

ROOT = Path(__file__).resolve().parents[2]

_STAGE_THAT_HANGS = """
import sys, time
from perfalign.flows.runstate import RunState
run = RunState(sys.argv[1])
run.data["config"] = {"_meta": {"profile": "embedded"}}
run.save()
run.run_stage("synthetic", "h1", "sample", lambda: (print("started", flush=True), time.sleep(600)))
"""


def _dead_owner() -> dict:
    """The owner record of a process that has ended."""
    p = subprocess.Popen(["sleep", "60"])
    owner = process_owner(p.pid)
    p.kill()
    p.wait()
    return owner


def _status_text(root: Path) -> str:
    console = Console(record=True, width=250)
    console.print(status_table(list_runs(root)))
    return console.export_text()


def test_a_killed_stage_reads_interrupted_with_how_to_resume(tmp_path):
    run_dir = tmp_path / "runs" / "embedded"
    p = subprocess.Popen([sys.executable, "-c", _STAGE_THAT_HANGS, str(run_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        rec = list_runs(tmp_path / "runs")[0]["stages"]["synthetic"]
        assert rec["state"] == "running" and rec["runner"].startswith(f"process {p.pid} on ")  # alive: who runs it
        with pytest.raises(RunDirConflict, match="stage synthetic is running there"):
            check_run_dir(run_dir, "embedded")  # a second command in the same directory is refused
    finally:
        p.kill()  # kill -9: no handler runs, stages.json still says "running"
        p.wait()
    assert json.loads((run_dir / "stages.json").read_text())["stages"]["synthetic"]["state"] == "running"
    text = _status_text(tmp_path / "runs")
    assert "interrupted" in text and f"process {p.pid}" in text and "rerun the same command to resume" in text
    assert "pairs kept" not in text and "running" not in text  # before: running, "0 pairs kept, 0 rejected"
    check_run_dir(run_dir, "embedded")  # nobody runs it now
    RunState(run_dir).save()  # the next run of the directory stores what happened
    assert json.loads((run_dir / "stages.json").read_text())["stages"]["synthetic"]["state"] == "interrupted"


def test_owner_liveness_is_safe_against_pid_reuse():
    me = process_owner()
    assert owner_alive(me) is True
    assert owner_alive({**me, "start": me["start"] + 1}) is False  # same PID, another process
    assert owner_alive({**me, "boot": "0" * 36}) is False  # an earlier boot
    assert owner_alive({**me, "host": me["host"] + "-elsewhere"}) is None  # cannot tell from here
    assert owner_alive(_dead_owner()) is False
    assert owner_alive(None) is None


def test_a_run_directory_belongs_to_its_profile(tmp_path):
    run = RunState(tmp_path / "embedded")
    run.data["config"] = {"_meta": {"profile": "embedded"}}
    run.save()
    check_run_dir(tmp_path / "embedded", "embedded")
    check_run_dir(tmp_path / "new", "small")
    with pytest.raises(RunDirConflict, match="profile 'embedded', not 'small'.*--reuse-run-dir"):
        check_run_dir(tmp_path / "embedded", "small")
    check_run_dir(tmp_path / "embedded", "small", reuse=True)


def test_pipeline_defaults_to_a_directory_per_profile_and_refuses_another_profiles(tmp_path):
    d = tmp_path / "runs" / "embedded"
    d.mkdir(parents=True)
    (d / "stages.json").write_text(json.dumps({"run": "embedded", "config": {"_meta": {"profile": "embedded"}},
                                               "stages": {}}))
    env = dict(os.environ, PERFALIGN_HOME=str(tmp_path / "home"), COLUMNS="200")
    cmd = [sys.executable, "-m", "perfalign.cli", "pipeline", "--profile", "small"]
    p = subprocess.run([*cmd, "--out", str(d)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "holds a run of profile 'embedded'" in p.stderr, p.stderr[-2000:]
    assert len(p.stderr.strip().splitlines()) == 1
    p = subprocess.run([*cmd, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "runs/<profile>" in p.stdout and "--reuse-run-dir" in p.stdout


def test_flow_runs_of_a_dead_process_are_marked_crashed(prefect_server):
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.states import Completed, Running

    from perfalign.cli.session import crash_orphaned_runs

    @flow(name="orphan-check")
    def f():
        pass

    with get_client(sync_client=True) as client:
        dead = client.create_flow_run(f, tags=[owner_tag(_dead_owner())], state=Running())
        live = client.create_flow_run(f, tags=[owner_tag()], state=Running())  # the honest twin: still runs
        untagged = client.create_flow_run(f, state=Running())  # not ours to judge (a deployment's)
        assert crash_orphaned_runs() >= 1
        states = {r.id: client.read_flow_run(r.id).state for r in (dead, live, untagged)}
        for r in (live, untagged):
            client.set_flow_run_state(r.id, Completed(), force=True)
    assert states[dead.id].type.value == "CRASHED" and "rerun the same command to resume" in states[dead.id].message
    assert states[live.id].type.value == "RUNNING" and states[untagged.id].type.value == "RUNNING"


def test_local_database_checked_without_a_server(tmp_path):
    import sqlite3

    db = tmp_path / "prefect.db"
    with sqlite3.connect(db) as c:
        c.execute("create table flow_run (id text, tags text, state_type text)")
        c.executemany("insert into flow_run values (?, ?, ?)", [
            ("a", json.dumps([owner_tag(_dead_owner())]), "RUNNING"),
            ("b", json.dumps([owner_tag()]), "RUNNING"),
            ("c", json.dumps([owner_tag(_dead_owner())]), "COMPLETED"),
            ("d", "[]", "RUNNING")])
    t = time.monotonic()
    assert orphans_in_local_db(db) == 1
    assert orphans_in_local_db(tmp_path / "none.db") == 0 and time.monotonic() - t < 5
