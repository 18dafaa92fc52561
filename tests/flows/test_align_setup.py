"""The align stage's set-up (the training libraries' import, each stage's input checks) shows
as progress through common.progress before its first slow step, not a silent minute."""
import pytest

from perfalign.common.progress import listening
from perfalign.flows.config import load_config


def test_align_set_up_reports_progress_before_each_slow_step(tmp_path):
    from perfalign.flows.align import SETUP, preflight, stage_configs

    tri, work = str(tmp_path / "triplets"), str(tmp_path / "work")
    configs = stage_configs(load_config(profile="embedded"), tri, work, None)
    seen = []
    with listening(lambda what, done, total: seen.append((what, done, total))), \
            pytest.raises(Exception, match="triplets"):  # no triplets: the sft check fails, after the libraries
        preflight(configs, ["sft", "dpa"], tri, None, work)
    assert seen == [(SETUP, 0, 3), (SETUP, 1, 3)]
