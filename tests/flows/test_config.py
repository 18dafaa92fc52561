"""The one typed configuration (flows/config.py): types checked, origins recorded, flags over
--set over the profile over the file; the file holds every default; and the two bugs of the
old dict config (the embedded model under the production profile; [sandbox] never reaching RLPF)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfalign.flows.config import TABLES, ConfigError, PerfalignConfig, load_config

ROOT = Path(__file__).resolve().parents[2]


def test_values_are_typed_and_remember_their_origin(tmp_path):
    cfg = load_config(profile="embedded", overrides=["perf.repeats=5", "eval.tasks=['pareval']"],
                      flags={"sandbox.workers": 3, "perf.source": None})
    assert cfg.perf.repeats == 5 and cfg.eval.tasks == ("pareval",) and cfg.sandbox.worker_count() == 3
    assert isinstance(cfg.perf.time_limit_factor, float)
    assert cfg.origins["perf.repeats"] == "--set" and cfg.origins["sandbox.workers"] == "--workers"
    assert cfg.origins["synth.n"] == "profile embedded" and "perf.batch_size" not in cfg.origins
    assert cfg.explain()["perf"]["batch_size"] == {"value": 8, "from": "file"}
    # a relative flag path is the shell's, a relative file path the config's
    assert load_config(flags={"perf.source": "rel/dir"}).perf.source == str(Path.cwd() / "rel" / "dir")
    # round trip through a flow parameter / the run state
    assert PerfalignConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


@pytest.mark.parametrize("override, message", [
    ("perf.repeats=three", "expected int"),
    ("triplets.controlled_task=1", "expected bool"),
    ("eval.tasks='pareval'", "list of strings"),
    ("perf.nope=1", "unknown setting"),
    ("nope", "table.key=value"),
])
def test_bad_values_are_clear_errors(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides=[override])


def test_a_copy_of_the_file_must_hold_every_setting(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text((ROOT / "flows" / "perfalign.toml").read_text().replace("repeats = 3\n", ""))
    with pytest.raises(ConfigError, match=r"\[perf\] misses repeats"):
        load_config(f)
    f.write_text((ROOT / "flows" / "perfalign.toml").read_text() + "\n[extra]\nx = 1\n")
    with pytest.raises(ConfigError, match="unknown tables"):
        load_config(f)


def test_settings_have_no_defaults_of_their_own():
    # the config file is the one place for the pipeline's defaults
    for cls in TABLES.values():
        assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                   for f in dataclasses.fields(cls)), cls


def test_the_file_agrees_with_the_evaluation_presets():
    # eval.threads and the sample counts once disagreed (4 vs 8, 4 vs 2)
    from perfalign.evaluation import EvalConfig

    assert load_config().eval.threads == EvalConfig.production().omp_threads
    assert load_config().eval.n_samples == EvalConfig.production().num_samples


def test_production_profile_with_the_embedded_model_trains_the_embedded_model(tmp_path):
    """Regression: flows/align.py dropped base_model="embedded", so the production profile
    silently trained Deepseek-Coder 6.7B."""
    from perfalign.alignment.models import EMBEDDED, PRODUCTION_BASE_MODEL
    from perfalign.flows.align import stage_configs

    configs = stage_configs("production", str(tmp_path / "t"), str(tmp_path / "w"), None, base_model="embedded")
    assert configs["sft"].model_name_or_path == EMBEDDED and configs["reward"].model_name_or_path == EMBEDDED
    assert stage_configs("production", str(tmp_path / "t"), str(tmp_path / "w"), None)["sft"].model_name_or_path \
        == PRODUCTION_BASE_MODEL


def test_sandbox_settings_reach_rlpf(tmp_path, monkeypatch):
    """Regression: the [sandbox] table never reached RLPF (its reward hard-coded "auto")."""
    import perfalign.flows.align
    from perfalign.flows.pipeline import stage_align
    from perfalign.flows.runstate import RunState

    cfg = load_config(profile="embedded", overrides=["sandbox.backend='docker'", "sandbox.workers=3"])
    seen = {}

    def fake_align(*args, **kwargs):
        seen["rlpf"] = perfalign.flows.align.stage_configs(cfg.align.profile, args[0], args[1], args[2], args[4],
                                                 sandbox_backend=kwargs["sandbox_backend"],
                                                 workers=kwargs["workers"])["rlpf"]
        return {}

    monkeypatch.setattr(perfalign.flows.align, "align", fake_align)
    stage_align(cfg, RunState(tmp_path / "run"))
    assert seen["rlpf"].sandbox_backend == "docker" and seen["rlpf"].sandbox_workers == 3


def test_config_command_shows_values_and_origins():
    p = subprocess.run([sys.executable, "-m", "perfalign.flows.cli", "config", "--json", "--set", "perf.repeats=2"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["profile"] == "embedded"  # the same default profile as `perfalign pipeline`
    assert out["settings"]["perf"]["repeats"] == {"value": 2, "from": "--set"}
    p = subprocess.run([sys.executable, "-m", "perfalign.flows.cli", "config", "--set", "perf.repeats=x"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "expected int" in p.stderr
