import os

import pytest

# Keep test caches and Prefect state out of the home directory.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def sandbox():
    from sandbox import Sandbox

    with Sandbox(backend="auto", workers=2) as sb:
        yield sb
