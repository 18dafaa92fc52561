"""The ``kernelbench`` task group of `perfalign eval`: KernelBench problems from the shared checkout,
every sample scored for real by the kernel environment in the sandbox. One evaluation of two
level-1 problems scores the reference oracle (speedup ~1) beside a hostile "model" whose samples
call the reference's operator or return a wrong result (neither may count as correct)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfalign.config.tables import preset
from perfalign.evaluation import EvalConfig, ModelSpec, evaluate
from perfalign.evaluation.records import ScoreRun
from perfalign.evaluation.tasks.kernelbench import NO_DIR_REASON, KernelBenchTask
from perfalign.evaluation.tasks.registry import load_tasks
from perfalign.sandbox.environments import TorchSite, torch_site

KB = Path(__file__).resolve().parents[3] / "shared" / "external" / "kernelbench"
needs_kb = pytest.mark.skipif(not (KB / "level1").is_dir(), reason=f"KernelBench is not at {KB} (../shared/external)")
needs_torch = pytest.mark.skipif(torch_site().dir is None,
                                 reason=f"the sandbox cannot use torch: {torch_site().reason}")

# problem-agnostic hostile samples: Model's own computation under another text (the reference
# operator), and a result of the right kind with wrong values
REFERENCE_OP = "{source}\n\nclass ModelNew(Model):\n    pass\n"
WRONG = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
         "        super().__init__()\n\n    def forward(self, *xs):\n        return torch.zeros_like(xs[0])\n")


class HostileGenerator:
    def generate(self, prompts, n):
        from perfalign.kernelenv import load_problem

        out = []
        for p in prompts:
            src = load_problem(p.spec.path).source
            out.append([f"```python\n{REFERENCE_OP.format(source=src)}```", f"```python\n{WRONG}```"][:n])
        return out


def _config(**kw) -> EvalConfig:
    base = dict(models=["ref=oracle:reference"], tasks=("kernelbench",), kernelbench_dir=str(KB),
                max_prompts_per_task=2, num_samples=2, controls=False)
    return preset("eval", **{**base, **kw})


def test_without_a_folder_every_prompt_is_skipped_with_the_reason(tmp_path):
    cfg = preset("eval", num_samples=2, models=["oracle:reference"], tasks=("kernelbench",))
    cfg.validate()  # no folder is not a configuration error: the group is skipped, saying why
    prompts, skipped = KernelBenchTask().load(cfg)
    assert prompts == [] and [(s.task, s.reason) for s in skipped] == [("kernelbench", NO_DIR_REASON)]
    assert "kernelbench_dir" in NO_DIR_REASON and "../shared/external/kernelbench" in NO_DIR_REASON
    with pytest.raises(ValueError, match="kernelbench_dir"):
        load_tasks(cfg)  # nothing else selected: the empty task set names the reason
    with pytest.raises(FileNotFoundError, match="kernelbench_dir .*does not exist"):
        preset("eval", num_samples=2, models=["oracle:reference"], tasks=("kernelbench",),
                            kernelbench_dir=str(tmp_path / "missing")).validate()
    with pytest.raises(ValueError, match="kernelbench_levels"):
        preset("eval", num_samples=2, models=["oracle:reference"], tasks=("kernelbench",),
               kernelbench_dir=str(tmp_path),
                            kernelbench_levels=(0,)).validate()


def test_cli_names_a_missing_folder(tmp_path):
    from perfalign.cli.main import app

    res = CliRunner().invoke(app, ["eval", "--out", str(tmp_path / "r"), "--models", "oracle:reference",
                                   "--tasks", "kernelbench", "--kernelbench-dir", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "kernelbench_dir" in res.output, res.output


@needs_kb
@needs_torch
def test_prompts_load_sorted_and_limited_with_oracles():
    prompts, skipped = load_tasks(_config(max_prompts_per_task=3, kernelbench_levels=(1, 2)))
    assert [p.prompt_id for p in prompts] == ["level1/1_Square_matrix_multiplication_",
                                              "level1/2_Standard_matrix_multiplication_",
                                              "level1/3_Batched_matrix_multiplication"]
    assert sum(s.reason.startswith("over max_prompts_per_task") for s in skipped) == 100 + 50 - 3
    p = prompts[0]
    assert p.task == "kernelbench" and p.language == "python3" and p.timing == "cpu"
    assert "ModelNew" in p.text and "load_cpp" in p.text and p.text.endswith("### Response:\n")
    assert "```python\nimport torch" in p.text and "return torch.matmul(A, B)" in p.text
    assert p.spec.path.endswith("1_Square_matrix_multiplication_.py")
    assert p.references["reference"].rstrip().endswith("ModelNew = Model")
    for mode in ("reference", "slow"):  # the task's own reference-calling oracles, and nothing else
        assert p.spec.is_reference_program("\n" + p.references[mode] + "\n")
    assert not p.spec.is_reference_program(REFERENCE_OP.format(source=p.references["reference"]))
    every, _ = KernelBenchTask().load(_config(kernelbench_levels=(1,)))
    swish = next(q for q in every if q.prompt_id == "level1/25_Swish")
    assert "load_cpp" in swish.references["fast"] and swish.expected_speedup["fast"] is None  # kernelenv/oracles


def test_no_torch_in_the_sandbox_excludes_the_prompts_with_the_reason(monkeypatch):
    from perfalign.evaluation.records import EvalPrompt
    from perfalign.evaluation.tasks.kernelbench import TASK, KernelSpec

    monkeypatch.setattr("perfalign.kernelenv.score.environments.torch_site",
                        lambda: TorchSite(None, reason="no torch here"))
    p = EvalPrompt(TASK, "level1/x", "...", "python3", "cpu", KernelSpec("/nowhere/x.py", "level1/x"))
    run = ScoreRun(None, preset("eval", num_samples=2, models=["oracle:reference"], tasks=("kernelbench",)))
    samples, baselines, _ = KernelBenchTask().score([p], {"m": [["```python\nclass ModelNew: pass\n```", "  \n"]]}, run)
    assert baselines["level1/x"].verdict == "UNUSABLE" and "no torch here" in baselines["level1/x"].message
    assert [s.verdict for s in samples] == ["EXCLUDED", "NO_CODE"]
    assert not any(s.correct for s in samples)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One evaluation (controls off): the reference oracle and the hostile model on 2 problems."""
    import importlib
    import json

    ev = importlib.import_module("perfalign.evaluation.evaluate")  # the module (the package exports the function)
    real = ev.make_generator
    patch = pytest.MonkeyPatch()
    patch.setattr(ev, "make_generator",
                  lambda spec, cfg: HostileGenerator() if spec.label == "hostile" else real(spec, cfg))
    try:
        out = tmp_path_factory.mktemp("kb-eval")
        report = evaluate(_config(models=[ModelSpec("ref", "oracle:reference"), ModelSpec("hostile", "oracle:fast")]),
                          out)
    finally:
        patch.undo()
    return report, [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()], out


@needs_kb
@needs_torch
def test_reference_oracle_scores_correct_at_about_one(run):
    report, _, out = run
    ref = report.score("ref", "kernelbench")
    assert ref is not None and ref.prompts == 2 and ref.samples == 4, report.excluded
    assert ref.pass_at["1"] == 1.0, ref.per_prompt
    # Against itself the reference reads ~1 wherever its timing can be trusted. On a loaded host the
    # noise gate may withhold a speedup (flagged unmeasurable, 0 in Eq. 10) or, when the noise came
    # with the candidate, score it at a pessimistic bound (flagged erratic_timing): never a wrong,
    # unflagged number.
    _, samples, _ = run
    ref_samples = [s for s in samples if s["model"] == "ref"]
    trusted = [s["speedup"] for s in ref_samples if s["speedup"] and "erratic_timing" not in s["flags"]]
    assert all(0.5 <= x <= 2.0 for x in trusted), ref_samples
    assert all(0 < s["speedup"] <= 2.0 for s in ref_samples if "erratic_timing" in s["flags"]), ref_samples
    assert all("unmeasurable" in s["flags"] for s in ref_samples if not s["speedup"]), ref_samples
    assert ref.verdicts == {"correct": 4}
    assert report.excluded == [] and len(report.baselines) == 2
    assert all(b["runtime_s"] > 0 and b["verdict"] == "OK" for b in report.baselines), report.baselines
    assert "KernelBench (CPU)" in (out / "report.md").read_text()


@needs_kb
@needs_torch
def test_hostile_samples_are_not_correct(run):
    report, samples, _ = run
    hostile = report.score("hostile", "kernelbench")
    assert hostile.pass_at["1"] == 0.0 and hostile.speedup_at["1"] == 0.0, hostile.per_prompt
    by_index: dict[int, list] = {}
    for s in samples:
        if s["model"] == "hostile":
            by_index.setdefault(s["index"], []).append(s)
    ref_op, wrong = by_index[0], by_index[1]
    assert len(ref_op) == len(wrong) == 2
    assert all(not s["correct"] and s["speedup"] == 0.0 for s in ref_op + wrong)
    # Model's own computation passes the output checks, and is flagged as the reference op
    assert all(any(f.startswith("hack:reference_op") for f in s["flags"]) for s in ref_op), ref_op
    assert all(s["verdict"] == "flagged" for s in ref_op), ref_op
    assert all(s["verdict"] == "incorrect" for s in wrong), wrong
