"""The align flow's scheduler: with parallel_stages = 2 the stages train side by side in
processes of their own as the DAG allows (SFT beside the RM, RLPF after both, DPA after SFT);
a failing stage raises its own error at once and ends the stage beside it."""
import dataclasses
import json
import os
import time

import child_targets
import pytest

from perfalign.flows.env import configure_prefect


def _configs(tmp_path, seconds, fail=()):
    return {s: {"name": s, "seconds": seconds.get(s, 0.5), "out": str(tmp_path), "pidfile": str(tmp_path / "pids"),
                "fail": s in fail} for s in ("sft", "reward", "rlpf", "dpa")}


@pytest.fixture
def run_scheduler(prefect_server, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    configure_prefect()
    from prefect import flow

    from perfalign.alignment import stages
    from perfalign.flows import align

    for s in list(stages.STAGES):
        monkeypatch.setitem(stages.STAGES, s, dataclasses.replace(stages.STAGES[s], run=child_targets.fake_stage))

    @flow(name="align-scheduler-probe")
    def probe(configs, parallel):
        return align._train_in_dag_order(list(align.STAGES), configs, parallel)

    return probe


def test_stages_run_side_by_side_in_dag_order(run_scheduler, tmp_path):
    res = run_scheduler(_configs(tmp_path, {"sft": 3.0, "reward": 1.5, "dpa": 1.0, "rlpf": 1.0}), 2)
    assert list(res) == ["sft", "reward", "rlpf", "dpa"]
    t = {s: json.loads((tmp_path / s / "times.json").read_text()) for s in res}
    pids = {r["metrics"]["pid"] for r in res.values()}
    assert os.getpid() not in pids and len(pids) == 4  # each stage in a process of its own
    assert t["reward"][0] < t["sft"][1] and t["sft"][0] < t["reward"][1]  # SFT beside the RM
    assert t["dpa"][0] >= t["sft"][1]                                       # DPA starts from SFT
    assert t["rlpf"][0] >= max(t["sft"][1], t["reward"][1])                 # RLPF from SFT and the RM
    assert t["rlpf"][0] < t["dpa"][1] and t["dpa"][0] < t["rlpf"][1]        # ... side by side


def test_one_at_a_time_runs_in_this_process(run_scheduler, tmp_path):
    res = run_scheduler(_configs(tmp_path, {}), 1)
    assert {r["metrics"]["pid"] for r in res.values()} == {os.getpid()}


def test_a_failing_stage_raises_its_error_and_stops_the_other(run_scheduler, tmp_path):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="stage reward: bad input"):
        run_scheduler(_configs(tmp_path, {"sft": 120.0}, fail={"reward"}), 2)
    assert time.monotonic() - t0 < 60  # not the 120 s SFT would have taken
    pids = dict(line.split() for line in (tmp_path / "pids").read_text().splitlines())
    assert set(pids) == {"sft", "reward"}  # nothing started after the failure
    with pytest.raises(ProcessLookupError):
        os.kill(int(pids["sft"]), 0)
