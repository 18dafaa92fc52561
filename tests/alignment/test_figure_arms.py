"""experiments/figure_arms.py: the idiom experiment's figure from the seeds' samples_MODEL.json."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("figure_arms",
                                               Path(__file__).parents[2] / "experiments" / "figure_arms.py")
figure = sys.modules["figure_arms"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figure)
import analysis  # noqa: E402  (experiments/, put on the path by figure_arms)


def _heldout(per_prompt: list[tuple[int, int, int]]) -> dict:
    """A held-out report from (fast & correct, slow & correct, incorrect) per prompt of 4 samples."""
    per = {f"p{i}": {"fast_correct": f, "slow_correct": s, "incorrect": x, "no_code": 0}
           for i, (f, s, x) in enumerate(per_prompt)}
    n = sum(f + s + x for f, s, x in per_prompt)
    fast, correct = sum(f for f, _, _ in per_prompt), sum(f + s for f, s, _ in per_prompt)
    return {"samples": n, "fast_correct_share": fast / n, "correct_share": correct / n, "per_problem": per}


def _humaneval() -> dict:  # one problem's samples withheld: out of its share, not a 0
    per = {"HumanEval/0": {"samples": 2, "correct": 2, "fast_correct": 1, "withheld": 0},
           "HumanEval/4": {"samples": 2, "correct": 0, "fast_correct": 0, "withheld": 0},
           "HumanEval/32": {"samples": 2, "correct": 0, "fast_correct": 0, "withheld": 2}}
    return {"samples": 4, "withheld": 2, "correct_share": 0.5, "fast_correct_share": 0.25, "per_problem": per}


def test_one_seed_is_read_over_its_prompts_and_several_over_seeds(tmp_path):
    sft = _heldout([(0, 4, 0), (1, 2, 1), (0, 0, 4)])
    one = figure.bars({0: {"sft": {"heldout": sft, "humaneval": _humaneval()}}})
    m, h = one["heldout"]["sft"]["correct_share"]
    assert m == pytest.approx(7 / 12) and h == pytest.approx(analysis.t_interval([1.0, 0.75, 0.0])[1])
    assert one["heldout"]["sft"]["fast_correct_share"][1] == pytest.approx(analysis.t_interval([0, 0.25, 0])[1])
    assert one["humaneval"]["sft"]["correct_share"] == (0.5, pytest.approx(analysis.t_interval([1.0, 0.0])[1]))
    two = figure.bars({0: {"sft": {"heldout": sft}, "rft": {"heldout": sft}},
                       1: {"sft": {"heldout": _heldout([(4, 0, 0)] * 3)}}})
    assert two["heldout"]["sft"]["fast_correct_share"] == analysis.t_interval([1 / 12, 1.0])
    assert list(two["heldout"]) == ["sft", "rft"] and "humaneval" not in two
    m, h = two["heldout"]["rft"]["correct_share"]  # one seed of two: no interval, not a within-seed one
    assert m == pytest.approx(7 / 12) and h != h

    for seed, model in ((0, "sft"), (0, "dpa"), (3, "sft")):
        (tmp_path / f"seed{seed}").mkdir(exist_ok=True)
        (tmp_path / f"seed{seed}" / f"samples_{model}.json").write_text(json.dumps({"heldout": sft}))
    per_seed = figure.read_seeds(tmp_path, [0, 1, 3])
    assert sorted(per_seed) == [0, 3] and sorted(per_seed[0]) == ["dpa", "sft"]
    (tmp_path / "seed0" / "result.json").write_text(json.dumps(  # a stage that did not move: not counted
        {"movement": {"dpa": {"value": 0.5, "threshold": 2.0, "moved": False}}}))
    assert sorted(figure.read_seeds(tmp_path, [0])[0]) == ["sft"]
    out = tmp_path / "fig" / "arms.png"
    figure.plot(figure.bars(per_seed), sorted(per_seed), out, {"sft": 2, "dpa": 1})
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit, match="no samples_MODEL.json"):
        figure.read_seeds(tmp_path, [7])
