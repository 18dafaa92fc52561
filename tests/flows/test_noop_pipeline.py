"""A pipeline whose every stage is done with today's inputs answers from its run state
(flows.stagekeys.unchanged_run): no flow, no Prefect, each stage recorded skipped; a changed
input sends it to the flow, with the run state untouched."""
import json
import subprocess
import sys
from pathlib import Path

from perfalign.config.tables import load_config
from perfalign.flows.runstate import RunState
from perfalign.flows.stagekeys import KEYS, unchanged_run

ROOT = Path(__file__).resolve().parents[2]


def _finished_run(run: Path) -> None:
    """A run directory whose stages completed with the keys its files give today."""
    cfg = load_config(profile="embedded")
    for f in ("codecontests_perf/problems/train-0.parquet", "synthetic/synthetic/synthetic.parquet",
              "triplets/triplets/00000-of-00001.parquet", "align/sft/model.safetensors", "evaluate/report.md"):
        (run / f).parent.mkdir(parents=True, exist_ok=True)
        (run / f).write_text(f)
    state = RunState(run)
    for stage, key in KEYS.items():
        if (k := key(cfg, run)) is not None:
            state.data["stages"][stage] = {"state": "completed", "input_hash": k[0], "input": k[1], "seconds": 1.0,
                                           "finished": "2026-11-28T00:00:00+00:00", "summary": {"n": 1}}
    state.save()


def test_finished_run_is_answered_from_its_state_without_prefect(tmp_path):
    run = tmp_path / "run"
    _finished_run(run)
    code = ("import sys, json; from perfalign.config.tables import load_config; "
            "from perfalign.flows.stagekeys import unchanged_run; "
            f"r = unchanged_run(load_config(profile='embedded'), {str(run)!r}); "
            "print(json.dumps([r['states'], r['stages']['publish'], 'prefect' in sys.modules]))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    states, publish, prefect_loaded = json.loads(p.stdout.strip().splitlines()[-1])
    assert states == {s: "skipped" for s in ("codecontests_perf", "synthetic", "controlled", "triplets", "align",
                                             "evaluate")}
    assert publish == {"skipped": "no publish.repo_id configured"} and prefect_loaded is False
    data = json.loads((run / "stages.json").read_text())
    assert data["config"]["_meta"]["profile"] == "embedded"
    assert all(r["state"] == "skipped" and r.get("skipped_at") for r in data["stages"].values())


def test_changed_input_or_setting_goes_to_the_flow(tmp_path):
    run = tmp_path / "run"
    _finished_run(run)
    cfg = load_config(profile="embedded")
    before = (run / "stages.json").read_text()
    (run / "triplets" / "triplets" / "00000-of-00001.parquet").write_text("changed")  # align's input
    assert unchanged_run(cfg, run) is None
    assert (run / "stages.json").read_text() == before
    (run / "triplets" / "triplets" / "00000-of-00001.parquet").write_text("triplets/triplets/00000-of-00001.parquet")
    assert unchanged_run(load_config(profile="embedded", overrides=["eval.tasks=['controlled']"]), run) is None
    assert unchanged_run(cfg, run)["states"]["align"] == "skipped"
    assert unchanged_run(cfg, tmp_path / "never-ran") is None and not (tmp_path / "never-ran").exists()


def test_the_controlled_folder_is_an_input_of_the_triplets_stage(tmp_path):
    """The controlled stage's folder is read by triplets like synthetic/: new content reruns it;
    with the task off the controlled stage has no key (not run) and its record is not needed."""
    run = tmp_path / "run"
    _finished_run(run)
    cfg = load_config(profile="embedded")
    assert unchanged_run(cfg, run)["states"]["controlled"] == "skipped"
    (run / "controlled").mkdir()
    (run / "controlled" / "controlled_task.json").write_text("{}")
    assert unchanged_run(cfg, run) is None
    off = load_config(profile="embedded", overrides=["triplets.controlled_task=false"])
    assert KEYS["controlled"](off, run) is None and KEYS["controlled"](cfg, run) is not None
    from perfalign.flows.summaries import headline, run_label

    assert headline("controlled", {"train_instances": 96, "heldout_instances": 12}) == \
        "96 training + 12 held-out instances measured"  # `perfalign status`
    assert run_label(run / "controlled") == "run"


def test_failed_batches_are_retried_by_the_flow(tmp_path):
    run = tmp_path / "run"
    _finished_run(run)
    state = RunState(run)
    state.data["stages"]["codecontests_perf"]["summary"] = {"failed_batches": 1}
    state.save()
    assert unchanged_run(load_config(profile="embedded"), run) is None
