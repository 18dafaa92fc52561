"""The pilot gate's arithmetic on recorded samples (no model, no sandbox): the per-family counts,
shares, Wilson intervals and verdicts; and that ``alignment_proof.py --sft-only`` stops after SFT.
The samples' labels, the cut at the closing fence and the prompts' order: tests/alignment/test_proof.py."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfalign.alignment import proof as sampling

_spec = importlib.util.spec_from_file_location("pilot", Path(__file__).parents[2] / "experiments" / "pilot.py")
pilot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pilot)


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
    # no DPA, DPO, RM or RLPF folder (beside SFT's, only its lock file)
    assert sorted(p.name for p in (tmp_path / "seed0").iterdir()) == [".sft.lock", "sft"]


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


def test_the_table_without_a_verdict_counts_prompts_that_reach_a_fast_sample():
    """Training prompts at the arms' temperature: no gate, and a prompt counts as reachable when at
    least one of its k samples is fast & correct (a majority is not needed)."""
    def prompt(fam, pid, **counts):
        return [dict(r, problem_id=pid) for r in _rows(fam, **counts)]

    rows = (prompt("queue", "q0", slow_correct=7, incorrect=1) + prompt("queue", "q1", slow_correct=8)
            + prompt("pairs", "p0", fast_correct=1, slow_correct=6, no_code=1) + prompt("pairs", "p1", fast_correct=5,
                                                                                      incorrect=3))
    table = {r["family"]: r for r in pilot.gate_table(rows, verdict=False)}
    assert all("passes" not in r for r in table.values())
    q, p = table["queue"], table["pairs"]
    assert (q["prompts_any_fast_correct"], q["fast_correct_share"]) == (0, 0.0)
    assert q["prompt_any_fast_correct_ci"] == pilot.wilson(0, 2) and q["incorrect_share"] == pytest.approx(1 / 16)
    assert (p["prompts_any_fast_correct"], p["prompts_fast_correct"]) == (2, 1)  # p0: 1 of 8 reaches, no majority
    assert p["incorrect_ci"] == pilot.wilson(3, 16) and table["all"]["prompts_any_fast_correct"] == 2
    text = pilot.format_reach(pilot.gate_table(rows, verdict=False))
    assert "queue | 16 | 0 / 15 / 1 / 0 | 0.00 [0.00, 0.19] | 0.94 [" in text and "| 0/2 [0.00, 0.66]" in text
    assert "pass" not in text and "FAIL" not in text and "| 2/2 [" in text
    assert "passes" in pilot.gate_table(rows)[0]  # the held-out gate keeps its verdict


class _NoSandbox:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _main(monkeypatch, *argv) -> dict:
    """Run the script's main on argv with the task and the pilot recorded, not built or run."""
    import perfalign.sandbox

    seen = {}
    monkeypatch.setattr(perfalign.sandbox.Sandbox, "from_settings", classmethod(lambda cls, *a, **k: _NoSandbox()))
    monkeypatch.setattr(proof, "get_task", lambda w, sb, fams, heldout_only, sft_fast_share, records=None: seen.update(
        heldout_only=heldout_only) or "task")
    monkeypatch.setattr(proof, "pilot_gate", lambda task, cfg, model, out, prompts, sb, split: seen.update(
        temperature=cfg.pilot_temperature, split=split, prompts=prompts) or 0)
    monkeypatch.setattr(sys, "argv", ["alignment_proof.py", "--profile", "qwen-0.5b", "--families", "idioms", *argv])
    assert proof.main() == 0
    return seen


def test_pilot_split_and_temperature_options(monkeypatch):
    assert _main(monkeypatch, "--pilot") == {"heldout_only": True, "temperature": 0.2, "split": "heldout",
                                             "prompts": None}  # the pre-registered gate is unchanged
    assert _main(monkeypatch, "--pilot", "--pilot-split", "train", "--pilot-temperature", "1.0",
                 "--pilot-prompts", "16") == {"heldout_only": False, "temperature": 1.0, "split": "train",
                                              "prompts": 16}  # training prompts need the whole task
    monkeypatch.setattr(sys, "argv", ["alignment_proof.py", "--pilot", "--pilot-temperature", "0"])
    with pytest.raises(SystemExit, match="--pilot-temperature must be > 0"):
        proof.main()


def test_pilot_on_training_prompts_writes_the_table_without_a_verdict(tmp_path, monkeypatch):
    """pilot_gate's train split: the first prompts of the training instances, one per family in
    turn, sampled by the one path (``alignment.proof``); table.json carries no verdict and the sampling settings."""
    fam = lambda name: SimpleNamespace(name=name)  # noqa: E731
    train = [SimpleNamespace(family=fam(f), problem_id=f"{f}{i}") for f in ("a", "b") for i in range(3)]
    task = SimpleNamespace(train=train, heldout=[])
    calls = []

    def fake_run(task, model, out, instances, k, temperature, max_new, sandbox=None):
        calls.append(([i.problem_id for i in instances], k, temperature))
        gen = {"cpu_s": 2.0}
        return [{"problem_id": i.problem_id, "family": i.family.name, "sample": j, "prompt_generation": gen,
                 "label": "fast_correct" if j == 0 and i.family.name == "a" else "slow_correct"}
                for i in instances for j in range(k)]

    monkeypatch.setitem(sys.modules, "pilot", pilot)
    monkeypatch.setattr(sampling, "sample_and_label", fake_run)
    cfg = proof.ProofConfig(profile="qwen-0.5b", family_set="idioms", pilot_temperature=1.0, pilot_samples_per_prompt=4)
    assert proof.pilot_gate(task, cfg, "m", tmp_path, 4, None, split="train") == 0
    assert calls == [(["a0", "b0", "a1", "b1"], 4, 1.0)]
    out = json.loads((tmp_path / "table.json").read_text())
    assert (out["split"], out["temperature"], out["generation_cpu_s"]) == ("train", 1.0, 8.0)
    rows = {r["family"]: r for r in out["table"]}
    assert "passes" not in rows["a"] and rows["a"]["prompts_any_fast_correct"] == 2
    assert rows["b"]["prompts_any_fast_correct"] == 0 and not (tmp_path / "gate.json").exists()
