"""The align stage's set-up (the training libraries' import, each stage's input checks) shows
as progress through common.progress before its first slow step, not a silent minute."""
import dataclasses

import pytest

from perfalign.common.progress import listening
from perfalign.config.tables import load_config


def test_align_set_up_reports_progress_before_each_slow_step(tmp_path):
    from perfalign.flows.align import SETUP, preflight, stage_configs

    tri, work = str(tmp_path / "triplets"), str(tmp_path / "work")
    configs = stage_configs(load_config(profile="embedded"), tri, work, None)
    seen = []
    with listening(lambda what, done, total: seen.append((what, done, total))), \
            pytest.raises(Exception, match="triplets"):  # no triplets: the sft check fails, after the libraries
        preflight(configs, ["sft", "dpa"], tri, None, work)
    assert seen == [(SETUP, 0, 3), (SETUP, 1, 3)]


def test_a_trainers_set_up_is_reported_until_its_first_step(monkeypatch):
    from perfalign.alignment import stages
    from perfalign.common.progress import report
    from perfalign.flows.align import train_stage

    class Result:
        run_dir, metrics = "sft", {}

    def trainer(config):
        report("align: sft steps", 0, 4)
        report("align: sft steps", 1, 4)
        return Result()

    monkeypatch.setitem(stages.STAGES, "sft", dataclasses.replace(stages.STAGES["sft"], run=trainer))
    seen = []
    with listening(lambda what, done, total: seen.append((what, done, total))):
        train_stage.fn("sft", None)
    setup = "align: sft set-up (model, data)"
    assert seen == [(setup, 0, 1), ("align: sft steps", 0, 4), (setup, 1, 1), ("align: sft steps", 1, 4)]
