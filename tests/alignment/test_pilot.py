"""The pilot gate's arithmetic and classification on recorded samples (no model, no sandbox):
the labels from sandbox results, the per-family counts, shares, Wilson intervals and verdicts,
and the cut at the closing fence; and that ``alignment_proof.py --sft-only`` stops after SFT."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

_spec = importlib.util.spec_from_file_location("pilot", Path(__file__).parents[2] / "experiments" / "pilot.py")
pilot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pilot)


def _res(ok: bool, cpu: float | None = None):
    return SimpleNamespace(ok=ok, mean_cpu_time_s=cpu)


def test_label_from_sandbox_results():
    assert pilot.label(None, 0.05) == "no_code"
    assert pilot.label(_res(False), 0.05) == "incorrect"
    assert pilot.label(_res(True, 0.02), 0.05) == "fast_correct"
    assert pilot.label(_res(True, 0.05), 0.05) == "slow_correct"  # at the threshold: not faster than it


def test_wilson_matches_the_closed_form():
    # 7 of 10: p 0.7, z 1.96 -> (0.3968, 0.8922) by the textbook formula
    lo, hi = pilot.wilson(7, 10)
    assert lo == pytest.approx(0.3968, abs=1e-4) and hi == pytest.approx(0.8922, abs=1e-4)
    assert pilot.wilson(0, 8)[0] == 0.0 and pilot.wilson(8, 8)[1] == pytest.approx(1.0)
    assert pilot.wilson(0, 0) == (0.0, 1.0)


def _rows(family: str, **counts: int) -> list[dict]:
    return [{"family": family, "label": lab} for lab, n in counts.items() for _ in range(n)]


def test_gate_table_counts_shares_and_verdicts():
    rows = (_rows("pairs", fast_correct=2, slow_correct=6, incorrect=1, no_code=1)    # 0.8 correct, 0.6 headroom
            + _rows("powmod", fast_correct=7, slow_correct=1, incorrect=2)            # headroom 0.1: fails
            + _rows("stairs", slow_correct=5, incorrect=5))                          # correct 0.5: fails
    table = {r["family"]: r for r in pilot.gate_table(rows)}
    p = table["pairs"]
    assert (p["samples"], p["correct"], p["fast_correct"], p["no_code"]) == (10, 8, 2, 1)
    assert p["correct_share"] == pytest.approx(0.8) and p["headroom"] == pytest.approx(0.6)
    assert p["headroom_ci"] == pilot.wilson(6, 10) and p["passes"]
    assert table["powmod"]["headroom"] == pytest.approx(0.1) and not table["powmod"]["passes"]
    assert table["stairs"]["correct_share"] == pytest.approx(0.5) and not table["stairs"]["passes"]
    assert table["all"]["samples"] == 30 and table["all"]["correct"] == 21
    text = pilot.format_gate(pilot.gate_table(rows))
    assert "pairs | 10 | 2 / 6 / 1 / 1 | 0.80" in text and text.count("FAIL") == 2


def test_gate_table_with_the_prompt_as_the_unit():
    def prompt(pid, **counts):
        return [dict(r, problem_id=pid) for r in _rows("pairs", **counts)]

    rows = (prompt("a", fast_correct=3, slow_correct=1) + prompt("b", fast_correct=2, slow_correct=2)  # a tie: not fast
            + prompt("c", slow_correct=1, incorrect=3) + [dict(r, problem_id="d") for r in _rows("queue", no_code=4)])
    t = {r["family"]: r for r in pilot.gate_table(rows)}
    p = t["pairs"]
    assert (p["prompts"], p["prompts_correct"], p["prompts_fast_correct"]) == (3, 2, 1)
    assert p["prompt_headroom_ci"] == pilot.wilson(1, 3) and p["prompt_correct_ci"] == pilot.wilson(2, 3)
    assert (t["all"]["prompts"], t["all"]["prompts_correct"]) == (4, 2)
    assert p["headroom"] == pytest.approx(4 / 12)  # the samples' verdict is unchanged
    text = pilot.format_gate(pilot.gate_table(rows))
    assert "| 2/3 [" in text and "| 1/3 [" in text and "| 0/1 [" in text  # counts, not truth values


def test_gate_thresholds_are_inclusive():
    t = {r["family"]: r for r in pilot.gate_table(_rows("x", fast_correct=3, slow_correct=3, incorrect=4))}
    assert t["x"]["correct_share"] == pytest.approx(0.6) and t["x"]["headroom"] == pytest.approx(0.3)
    assert t["x"]["passes"]


def test_a_sample_is_cut_at_its_closing_fence():
    text = "Here:\n```python\nprint(1)\n```\nThis prints 1.\n```python\nx\n```"
    assert text[:pilot._fence_end(text)] == "Here:\n```python\nprint(1)\n```"
    assert pilot._fence_end("```python\nprint(1)") == len("```python\nprint(1)")  # cut by the length: kept


def test_interleaved_puts_one_prompt_per_family_first():
    fam = lambda name: SimpleNamespace(name=name)  # noqa: E731
    insts = [SimpleNamespace(family=fam(f), id=i) for i, f in enumerate("aabbcc")]
    assert [i.id for i in pilot.interleaved(insts)] == [0, 2, 4, 1, 3, 5]


_proof_spec = importlib.util.spec_from_file_location("alignment_proof",
                                                     Path(__file__).parents[2] / "experiments" / "alignment_proof.py")
proof = sys.modules["alignment_proof"] = importlib.util.module_from_spec(_proof_spec)  # dataclasses look it up
_proof_spec.loader.exec_module(proof)


def test_sft_only_stops_after_the_sft_stage(tmp_path):
    """A finished SFT run is resumed after (not retrained) and nothing past it starts."""
    sft = tmp_path / "seed0" / "sft"
    sft.mkdir(parents=True)
    (sft / "metrics.json").write_text(json.dumps({"train_loss": 0.5, "train_steps": 72}))
    task = SimpleNamespace(data_dir=tmp_path / "task", codecontests_dir=tmp_path / "task" / "codecontests")
    cfg = proof.ProofConfig(workdir=str(tmp_path), profile="qwen-0.5b", family_set="idioms")
    out = proof.run_seed(task, 0, cfg, sandbox=None, sft_only=True)
    assert out["seed"] == 0 and out["sft"] == {"train_loss": 0.5, "train_steps": 72}
    assert [p.name for p in (tmp_path / "seed0").iterdir()] == ["sft"]  # no DPA, DPO, RM or RLPF folder


def test_sft_only_is_documented_in_help(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["alignment_proof.py", "--help"])
    with pytest.raises(SystemExit):
        proof.main()
    assert "--sft-only" in capsys.readouterr().out


def test_a_task_built_with_another_sft_mix_is_refused_and_the_pilot_reuses_the_built_task(tmp_path):
    def built(folder, share):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "controlled_task.json").write_text(json.dumps(
            {"family_set": "idioms", "sft_fast_share": share, "train": [], "heldout": ["idm_pairs_p3_s0"],
             "runtimes": {"idm_pairs_p3_s0": {"fast": 0.01, "slow": 0.1}}}))

    built("pilot_task", None)
    assert proof.get_task(tmp_path, None, "idioms", heldout_only=True).root.name == "pilot_task"
    built("task", None)  # an even-mix task: the seeds refuse it, the pilot reads its held-out references
    with pytest.raises(SystemExit, match="built with sft_fast_share None, not 0.25: give another --workdir"):
        proof.get_task(tmp_path, None, "idioms", sft_fast_share=0.25)
    held = proof.get_task(tmp_path, None, "idioms", heldout_only=True, sft_fast_share=0.25)
    assert held.root.name == "task" and [i.problem_id for i in held.heldout] == ["idm_pairs_p3_s0"]
