"""The `pipeline` flow on a small slice of the embedded profile: stages run in order in one
run directory, a rerun skips everything, a failing stage names itself, its input and its log,
and the next run resumes at that stage."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfalign.config.tables import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["perf.limit_problems=8", "perf.max_tests=2", "perf.repeats=1", "synth.n=6"]


def _cli(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "perfalign.cli", *args], cwd=ROOT, capture_output=True,
                          text=True,
                          timeout=timeout)


def test_config_profiles_and_overrides():
    prod = load_config(profile="production")
    emb = load_config(profile="embedded", overrides=["perf.repeats=5", "synth.model=x"])
    assert prod.perf.source == "hf:deepmind/code_contests" and prod.align.base_model == prod.sft.model_name_or_path
    assert Path(emb.perf.source).is_dir() and emb.align.base_model == "embedded"
    assert emb.perf.repeats == 5 and emb.synth.model == "x"
    with pytest.raises(ConfigError, match="unknown setting"):
        load_config(overrides=["perf.nope=1"])
    with pytest.raises(ConfigError, match="profile"):
        load_config(profile="laptop")


@pytest.mark.timeout(2400)  # two pipeline runs end to end (~6 min idle; 19 min seen at load 5-13)
def test_pipeline_runs_skips_and_resumes(prefect_server, tmp_path):
    run = tmp_path / "run"
    sets = [a for s in SMALL for a in ("--set", s)]
    # a bad base model fails the align stage, after the data stages completed
    p = _cli("pipeline", "--out", str(run), *sets, "--set", "align.base_model='/nonexistent/model'")
    assert p.returncode == 1
    assert "stage 'align' failed" in p.stderr and "align.log" in p.stderr, p.stderr[-2000:]
    states = {k: v["state"] for k, v in json.loads((run / "stages.json").read_text())["stages"].items()}
    assert states == {"codecontests_perf": "completed", "synthetic": "completed", "controlled": "completed",
                      "triplets": "completed", "align": "failed"}
    assert "nonexistent" in (run / "logs" / "align.log").read_text()
    st = _cli("status", "--root", str(tmp_path))
    assert "align:failed" in st.stdout.replace("\n", "") or "failed" in st.stdout

    # fixed: resumes at align, the data stages are skipped (unchanged inputs)
    p = _cli("pipeline", "--out", str(run), *sets, "--set", "align.stages=['sft','dpa']")
    assert p.returncode == 0, p.stderr[-3000:]
    stages = json.loads((run / "stages.json").read_text())["stages"]
    assert {k: v["state"] for k, v in stages.items() if k not in ("align", "evaluate")} == {
        "codecontests_perf": "skipped", "synthetic": "skipped", "controlled": "skipped", "triplets": "skipped"}
    assert stages["align"]["state"] == stages["evaluate"]["state"] == "completed"
    assert (run / "align" / "dpa" / "metrics.json").exists()
    assert "| +DPA |" in (run / "evaluate" / "report.md").read_text()
    assert "evaluation report:" in p.stdout
