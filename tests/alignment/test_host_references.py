"""experiments/host_references.py: a seed's idiom rows judged against another host's reference runtimes
(docs/alignment.md, "Seed 8 on another host"), on recorded rows; no model, no sandbox."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).parents[2] / "experiments"
RECORDS = Path(__file__).parents[2] / "docs" / "measurements" / "confirmatory-qwen05b"
sys.path.insert(0, str(EXPERIMENTS))  # host_references imports arms, as the script does
_spec = importlib.util.spec_from_file_location("host_references", EXPERIMENTS / "host_references.py")
hr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hr)

RUNTIMES = {"p1": {"fast": 0.010, "medium": 0.040, "slow": 0.200}}  # threshold sqrt(0.01 * 0.04) = 0.02


def _row(label, cpu, sample=0):
    return {"problem_id": "p1", "family": "f", "sample": sample, "label": label, "cpu_time_s": cpu,
            "threshold_s": 0.02, "text": "x"}


def test_a_row_is_judged_against_the_given_references_and_only_correct_rows_change():
    rows = [_row("fast_correct", 0.015), _row("slow_correct", 0.025, 1), _row("incorrect", None, 2),
            _row("no_code", None, 3)]
    same = hr.relabel(rows, RUNTIMES)
    assert [r["label"] for r in same] == ["fast_correct", "slow_correct", "incorrect", "no_code"]
    slower_host = {"p1": {k: v * 1.5 for k, v in RUNTIMES["p1"].items()}}  # threshold 0.03
    moved = hr.relabel(rows, slower_host)
    assert [r["label"] for r in moved] == ["fast_correct", "fast_correct", "incorrect", "no_code"]
    assert moved[1]["threshold_s"] == pytest.approx(0.03)
    assert rows[1]["label"] == "slow_correct"  # the input rows are not touched


def _records(tmp_path: Path, rows: list[dict]) -> Path:
    rec = tmp_path / "records"
    (rec / "seed8" / "eval_sft_heldout").mkdir(parents=True)
    (rec / "seed8" / "eval_sft_heldout" / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = {"seed": 8, "samples": {"sft": {"heldout": {"samples": len(rows), "fast_correct_share": 0.5},
                                             "humaneval": {"samples": 2, "fast_correct_share": 0.0}}}}
    (rec / "seed8" / "result.json").write_text(json.dumps(result))
    return rec


def test_the_copy_has_the_seeds_idiom_shares_recomputed_and_humaneval_as_recorded(tmp_path):
    rec = _records(tmp_path, [_row("fast_correct", 0.015), _row("slow_correct", 0.025, 1)])
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"runtimes": {"p1": {k: v * 1.5 for k, v in RUNTIMES["p1"].items()}}}))
    changed = hr.relabelled_records(rec, 8, refs, tmp_path / "copy")
    assert changed == {"sft": {"heldout": (0.5, 1.0)}}
    out = json.loads((tmp_path / "copy" / "seed8" / "result.json").read_text())
    assert out["samples"]["sft"]["heldout"]["fast_correct_share"] == 1.0
    assert out["samples"]["sft"]["heldout"]["mean_speedup"] == pytest.approx((0.06 / 0.015 + 0.06 / 0.025) / 2)
    assert out["samples"]["sft"]["humaneval"] == {"samples": 2, "fast_correct_share": 0.0}
    assert out["relabelled"]["references"] == str(refs)
    assert json.loads((rec / "seed8" / "result.json").read_text())["samples"]["sft"]["heldout"][
        "fast_correct_share"] == 0.5  # the records themselves are untouched


def test_rows_that_do_not_match_the_result_stop_with_a_line(tmp_path):
    rec = _records(tmp_path, [_row("fast_correct", 0.015)])
    result = json.loads((rec / "seed8" / "result.json").read_text())
    result["samples"]["sft"]["heldout"]["samples"] = 168
    (rec / "seed8" / "result.json").write_text(json.dumps(result))
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"runtimes": RUNTIMES}))
    with pytest.raises(SystemExit, match="1 rows recorded, the result counts 168"):
        hr.relabelled_records(rec, 8, refs, tmp_path / "copy")


@pytest.mark.skipif(not (RECORDS / "seed1" / "result.json").is_file(), reason="the confirmatory records")
def test_the_recorded_references_reproduce_a_recorded_seed_exactly(tmp_path):
    """Relabelling against the task's own references is the identity on a real seed's shares."""
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"runtimes": json.loads((RECORDS / "task" / "controlled_task.json").read_text())[
        "runtimes"]}))
    hr.relabelled_records(RECORDS, 1, refs, tmp_path / "copy")
    before = json.loads((RECORDS / "seed1" / "result.json").read_text())["samples"]
    after = json.loads((tmp_path / "copy" / "seed1" / "result.json").read_text())["samples"]
    assert {m: s["heldout"] for m, s in after.items()} == {m: s["heldout"] for m, s in before.items()}
