import os
import subprocess
import sys
from pathlib import Path

import pytest

# Test helpers (the private Docker engine, the loopback Hub and LLM servers) live in tests/fixtures/.
sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

# Keep test caches and Prefect state out of the home directory.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The one retry policy for tests that assert a band on measured times (``@pytest.mark.timing``):
# on a shared, noisy host a miss is measured again, up to twice, by pytest-rerunfailures. Only
# function-scoped measurements are re-measured; a module fixture's numbers are reused by a rerun.
TIMING_RERUNS = {"reruns": 2, "reruns_delay": 5}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timing") and not item.get_closest_marker("flaky"):
            item.add_marker(pytest.mark.flaky(**TIMING_RERUNS))


@pytest.fixture(scope="session")
def sandbox():
    from perfalign.sandbox import Sandbox

    with Sandbox(backend="auto", workers=2) as sb:
        yield sb


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def each_backend_sandbox(request):
    """The sandbox once per isolating backend; a module opts in with
    ``sandbox = pytest.fixture(scope="module")(lambda each_backend_sandbox: each_backend_sandbox)``."""
    from perfalign.sandbox import Sandbox

    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    with Sandbox(backend=request.param, workers=2) as sb:
        yield sb


@pytest.fixture(scope="session")
def docker_engine():
    """A private Docker engine with the sandbox image (tests/fixtures/docker_engine.py); DOCKER_HOST
    points at it for the session. Skips only when dockerd truly cannot start here."""
    from docker_engine import EngineUnavailable, start_engine

    before = os.environ.get("DOCKER_HOST")
    try:
        engine = start_engine()
    except EngineUnavailable as e:
        pytest.skip(f"no private Docker engine: {e}")
    try:
        yield engine
    finally:
        engine.stop()
        if before is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = before


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """A real local Prefect server for the session (one start-up instead of one per flow);
    its URL is exported so Dask worker processes and CLI subprocesses use it too."""
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_API_URL="", PREFECT_UI_ENABLED="false",
               PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS="2")
    log = open(home / "server.log", "w")
    prefect_bin = str(Path(sys.executable).parent / "prefect")
    proc = subprocess.Popen([prefect_bin, "server", "start", "--host", "127.0.0.1", "--port", str(port),
                             "--analytics-off"], env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 240
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"Prefect server did not start: {(home / 'server.log').read_text()[-2000:]}")
        time.sleep(0.5)
    os.environ["PREFECT_API_URL"] = url
    os.environ["PREFECT_HOME"] = str(home)
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield url
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def busy():
    """One CPU-bound process beside the scoring (the host's own load comes on top)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield proc
    proc.kill()
    proc.wait()
