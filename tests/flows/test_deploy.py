"""`perfalign deploy` against a real local Prefect server: the schedule creates runs and a
scheduled run executes."""
import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


async def _runs(deployment_name: str):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

    async with get_client() as client:
        name_filter = DeploymentFilter(name=DeploymentFilterName(any_=[deployment_name]))
        deps = await client.read_deployments(deployment_filter=name_filter)
        if not deps:
            return None, []
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id={"any_": [deps[0].id]}))
        return deps[0], runs


def test_deploy_schedules_and_executes(prefect_server, tmp_path):
    env = dict(os.environ, PREFECT_API_URL=prefect_server, PREFECT_RUNNER_POLL_FREQUENCY="2")
    cmd = [sys.executable, "-m", "perfalign.cli", "deploy", "--out-root", str(tmp_path),
           "--perf-cron", "* * * * *",
           "--limit-problems", "1", "--max-tests", "1", "--repeats", "1"]
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        dep, runs, completed = None, [], []
        while time.monotonic() < deadline:
            dep, runs = asyncio.run(_runs("nightly-incremental"))
            completed = [r for r in runs if r.state and r.state.is_completed()]
            if completed:
                break
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(2)
        assert dep is not None, "deployment was not registered"
        assert dep.schedules and dep.schedules[0].schedule.cron == "* * * * *"
        assert runs, "the schedule created no runs"
        assert completed, f"no scheduled run completed: {[r.state.type for r in runs]}"
        # the run really built the dataset
        assert list((tmp_path / "codecontests_perf" / "submissions").glob("*.parquet"))
        _, weekly = asyncio.run(_runs("weekly"))
        assert weekly and all(r.state.is_scheduled() for r in weekly)  # created ahead, not yet due
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_ui_on_another_port_calls_the_api_on_that_port(tmp_path):
    """`perfalign ui --port N` serves a UI whose API URL is on N (Prefect's default stays 4200)."""
    import json
    import socket
    import subprocess
    import time
    import urllib.request

    from perfalign.flows.server import server_command, server_env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(server_env("127.0.0.1", port), PREFECT_HOME=str(tmp_path), DO_NOT_TRACK="1")
    with open(tmp_path / "server.log", "w") as log:
        proc = subprocess.Popen(server_command("127.0.0.1", port), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui-settings", timeout=5) as r:
                    settings = json.load(r)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "server.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(1)
        assert settings["api_url"] == f"http://127.0.0.1:{port}/api"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_server_starts_through_the_interpreter_without_a_console_script(tmp_path):
    """An interpreter with the packages importable but no `prefect` script beside it (pip install
    --user, a venv reusing another's packages) still gets a working server command."""
    import site
    import subprocess
    import sys

    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    packages = os.pathsep.join(site.getsitepackages())
    code = (f"import site; [site.addsitedir(p) for p in {site.getsitepackages()!r}]; "  # the editable perfalign
            "import subprocess, sys; from perfalign.flows.server import server_command; "
            "cmd = server_command(); assert cmd[0] == sys.executable, cmd; "
            "sys.exit(subprocess.run(cmd[:cmd.index('start') + 1] + ['--help'], capture_output=True).returncode)")
    env = dict(os.environ, PYTHONPATH=packages, PREFECT_HOME=str(tmp_path))
    res = subprocess.run([str(bare / "python"), "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert not (bare / "prefect").exists() and res.returncode == 0, res.stderr[-2000:]
