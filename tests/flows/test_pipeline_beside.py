"""The pipeline starts the synthetic stage's work beside CodeContests-Perf (its own flow, a subflow
of the pipeline's run), records it in its turn, reports its failure as its own, and starts nothing
when the run state would skip it."""
import threading

import pytest

from perfalign.flows.env import configure_prefect


@pytest.fixture
def beside(prefect_server, monkeypatch, tmp_path):
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    configure_prefect()
    from prefect import flow

    from perfalign.config.tables import load_config
    from perfalign.flows import pipeline as pl
    from perfalign.flows.runstate import RunState

    started = {s: threading.Event() for s in ("codecontests_perf", "synthetic")}

    def meeting(name, other, fail=False):
        """Work that ends once the other stage's work has started: done only if both run at once."""
        @flow(name=f"probe-{name}")
        def work() -> dict:
            started[name].set()
            met = started[other].wait(120)
            if fail:
                raise ValueError(f"{name}: bad answer")
            return {"thread": threading.current_thread().name, "met": met}
        return work

    def run(synth_fail=False):
        synth = meeting("synthetic", "codecontests_perf", synth_fail)
        monkeypatch.setattr(pl, "synth_work", lambda cfg, run: ("h1", "sample", synth))

        @flow(name="pipeline-probe")
        def probe():
            run = RunState(tmp_path / "run")
            early = pl.start_beside(load_config(profile="embedded"), run)
            perf = run.run_stage("codecontests_perf", "h0", "sample", meeting("codecontests_perf", "synthetic"))
            synth = run.run_stage("synthetic", *early["synthetic"]) if early else None
            return early, perf, synth, run

        return probe()

    return run


def test_synthetic_runs_beside_codecontests_perf(beside, tmp_path):
    _, perf, synth, state = beside()
    assert synth == {"thread": "synthetic", "met": True}  # in a thread of its own, while CodeContests-Perf ran
    assert perf == {"thread": "MainThread", "met": True}
    assert {k: v["state"] for k, v in state.data["stages"].items()} == {
        "codecontests_perf": "completed", "synthetic": "completed"}

    from perfalign.config.tables import load_config
    from perfalign.flows import pipeline as pl
    from perfalign.flows.runstate import RunState

    # unchanged: the run state skips it, so nothing starts early
    assert pl.start_beside(load_config(profile="embedded"), RunState(tmp_path / "run")) == {}


def test_a_failure_beside_is_the_synthetic_stages_own(beside):
    from perfalign.flows.runstate import StageFailed

    with pytest.raises(StageFailed, match="synthetic") as e:
        beside(synth_fail=True)
    assert "bad answer" in str(e.value.__cause__)
