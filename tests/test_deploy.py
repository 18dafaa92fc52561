"""`perfalign deploy` against a real local Prefect server: the schedule creates runs and a
scheduled run executes."""
import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


async def _runs(deployment_name: str):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

    async with get_client() as client:
        deps = await client.read_deployments(deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[deployment_name])))
        if not deps:
            return None, []
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id={"any_": [deps[0].id]}))
        return deps[0], runs


def test_deploy_schedules_and_executes(prefect_server, tmp_path):
    env = dict(os.environ, PREFECT_API_URL=prefect_server, PREFECT_RUNNER_POLL_FREQUENCY="2")
    cmd = [sys.executable, "-m", "flows.cli", "deploy", "--out-root", str(tmp_path), "--perf-cron", "* * * * *",
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
        assert list((tmp_path / "codecontests_perf" / "data").glob("submissions-*.parquet"))
        _, weekly = asyncio.run(_runs("weekly"))
        assert weekly and all(r.state.is_scheduled() for r in weekly)  # created ahead, not yet due
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
