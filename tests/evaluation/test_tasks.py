"""Evaluation pieces without running programs: bundled task data, prompts, the driver result
protocol, code extraction, scoring, stage metrics, report rendering and input errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfalign.common.prompts import RESPONSE_MARKER
from perfalign.evaluation import EvalConfig, ModelSpec, load_report, write_report
from perfalign.evaluation.config import DEFAULT_PAREVAL_DIR, DEFAULT_POLYBENCH_DIR
from perfalign.evaluation.drivers import DriverSpec, normalize_candidate
from perfalign.evaluation.report import EvalReport
from perfalign.evaluation.run_models import finetune_metrics, models_from_run_dir
from perfalign.evaluation.task_scores import task_scores
from perfalign.evaluation.tasks.base import BaselineResult, SampleResult, extract_candidate
from perfalign.evaluation.tasks.registry import load_tasks
from perfalign.flows.config import preset
from perfalign.sandbox import CompileInfo, Language, RunResult, Verdict
from perfalign.sandbox import TestResult as _TestResult

ORACLE = [ModelSpec("o", "oracle:reference")]


def _config(**kw) -> EvalConfig:
    base = {"models": ORACLE, "tasks": ("pareval", "polybench"), "max_prompts_per_task": None, "num_samples": 2}
    return preset("eval", **{**base, **kw})


def test_bundled_tasks_load_with_prompts_and_references():
    prompts, skipped = load_tasks(_config())
    by_task: dict[str, list] = {}
    for p in prompts:
        by_task.setdefault(p.task, []).append(p)
    assert len(by_task["pareval-serial"]) == 5 and len(by_task["pareval-omp"]) == 5
    assert len(by_task["polybench"]) == 8
    assert {s.task for s in skipped} == {"pareval-mpi"} and all("MPI" in s.reason for s in skipped)
    for p in prompts:
        assert p.text.startswith("### Instruction:") and p.text.endswith(RESPONSE_MARKER)
        assert set(p.references) == {"reference", "slow", "fast"}
        assert p.timing == ("wall" if p.task == "pareval-omp" else "cpu")
        assert p.spec.parallel == (p.task == "pareval-omp")
    omp = by_task["pareval-omp"][0]
    assert "#include <omp.h>" in omp.text and "Use OpenMP" in omp.text
    assert omp.spec.job("x").env == {"OMP_NUM_THREADS": "2"} and omp.spec.job("x").compile_flags == ("-fopenmp",)
    serial = by_task["pareval-serial"][0]
    assert "OpenMP" not in serial.text and serial.spec.job("x").compile_flags == ()
    gemm = next(p for p in by_task["polybench"] if p.prompt_id == "gemm")
    assert "Optimize the following C++ solution" in gemm.text and "kernel_gemm" in gemm.text
    assert "perfalign_copy_C" in gemm.references["slow"]  # the in-out array is copied for the first call


def test_limits_and_omp_threads_are_configurable():
    prompts, skipped = load_tasks(_config(max_prompts_per_task=2, omp_threads=3, pareval_models=("omp",)))
    assert [p.task for p in prompts].count("pareval-omp") == 2 and [p.task for p in prompts].count("polybench") == 2
    assert all(p.spec.threads == 3 for p in prompts if p.task == "pareval-omp")
    assert any("max_prompts_per_task" in s.reason for s in skipped)


def test_input_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        preset("eval", models=[ModelSpec("m", str(tmp_path / "missing-model"))], tasks=("pareval",)).validate()
    with pytest.raises(ValueError, match="models is empty"):
        preset("eval", tasks=("pareval",)).validate()
    with pytest.raises(ValueError, match="unknown oracle mode"):
        preset("eval", models=[ModelSpec("o", "oracle:nope")], tasks=("pareval",)).validate()
    with pytest.raises(ValueError, match="codecontests_dir"):
        preset("eval", models=ORACLE, tasks=("codecontests",)).validate()
    with pytest.raises(ValueError, match="unknown or no tasks"):
        preset("eval", models=ORACLE, tasks=("humaneval",)).validate()
    with pytest.raises(ValueError, match="empty task set"):
        load_tasks(preset("eval", models=ORACLE, tasks=("pareval",), pareval_models=("mpi",)))
    with pytest.raises(FileNotFoundError, match="no ParEval tasks"):
        load_tasks(preset("eval", models=ORACLE, tasks=("pareval",), pareval_dir=str(tmp_path)))
    with pytest.raises(FileNotFoundError, match="no problems table"):
        load_tasks(preset("eval", models=ORACLE, tasks=("codecontests",), codecontests_dir=str(tmp_path)))
    assert ModelSpec.parse("DS+SFT=runs/sft") == ModelSpec("DS+SFT", "runs/sft")
    assert ModelSpec.parse("embedded") == ModelSpec("embedded", "embedded")
    assert EvalConfig(models=["DS=embedded", "oracle:slow"], tasks=["pareval"]).models == [
        ModelSpec("DS", "embedded"), ModelSpec("oracle:slow", "oracle:slow")]


def test_candidate_normalization_and_extraction():
    sig = "double f(std::vector<double> const& x)"
    assert normalize_candidate("double f(std::vector<double> const& x) { return 1; }", "f", sig).startswith("double f(")
    assert normalize_candidate("return 1.0;", "f", sig) == f"{sig} {{\nreturn 1.0;\n}}\n"
    assert normalize_candidate("return 1.0;\n}", "f", sig) == f"{sig} {{\nreturn 1.0;\n}}\n"  # brings its brace
    assert extract_candidate("```cpp\nint x;\n```") == ("int x;", "cpp", "fence")
    assert extract_candidate("int x;") == ("int x;", None, "raw")
    assert extract_candidate("int x;", accept_unfenced=False) == (None, None, "none")
    assert extract_candidate("  \n") == (None, None, "none")


def _run_result(verdict=Verdict.OK, output="") -> RunResult:
    compiled = CompileInfo(ok=verdict is not Verdict.COMPILE_ERROR, message="boom")
    return RunResult(verdict, "test", Language.CPP, True, compiled, [_TestResult(verdict, output=output)])


def test_driver_result_line_protocol():
    spec = DriverSpec("t", "f", "double f()", "", "double f() { return 0; }", "", repeats=3, nonce=42, timing="cpu")
    ok = spec.measure(_run_result(output="noise\nPERFALIGN 42 1 0.5 0.10 0.6 0.30 0.7 0.20\n"))
    assert ok.correct and ok.runtime_s == pytest.approx(0.20) and ok.times_s == [0.10, 0.30, 0.20]
    wall = DriverSpec("t", "f", "double f()", "", "double f() { return 0; }", "", repeats=3, nonce=42, timing="wall")
    line = "PERFALIGN 42 1 0.5 0.10 0.6 0.30 0.7 0.20\n"
    assert wall.measure(_run_result(output=line)).runtime_s == pytest.approx(0.6)
    assert spec.measure(_run_result(output="PERFALIGN 42 0\n")).verdict == "WRONG_ANSWER"
    assert spec.measure(_run_result(output="PERFALIGN 7 1 1 1 1 1 1 1\n")).verdict == "NO_RESULT"  # other nonce
    assert spec.measure(_run_result(output="PERFALIGN 42 1 0.5 0.1\n")).verdict == "NO_RESULT"  # too few
    bad = spec.measure(_run_result(Verdict.COMPILE_ERROR))
    assert not bad.correct and bad.verdict == "COMPILE_ERROR" and bad.message == "boom"
    with pytest.raises(ValueError, match="does not define"):
        DriverSpec("t", "g", "double g()", "", "double f() { return 0; }", "")


def _sample(model, pid, i, correct, speedup, task="polybench", verdict=None):
    return SampleResult(model, task, pid, i, "fence", "cpp", verdict or ("OK" if correct else "WRONG_ANSWER"), correct,
                        0.1 if correct else None, 1.0, speedup, "x")


def test_scoring_by_hand():
    from perfalign.evaluation.tasks.base import EvalPrompt

    prompts = [EvalPrompt("polybench", pid, "", "cpp", "cpu", None) for pid in ("a", "b", "c")]
    samples = [_sample("m", "a", 0, True, 2.0), _sample("m", "a", 1, False, 0.0),
               _sample("m", "b", 0, False, 0.0), _sample("m", "b", 1, False, 0.0, verdict="COMPILE_ERROR"),
               _sample("m", "c", 0, True, 9.0), _sample("m", "c", 1, True, 9.0)]
    baselines = {"a": BaselineResult("a", "polybench", "cpu", 1.0, "OK", "measured"),
                 "b": BaselineResult("b", "polybench", "cpu", 1.0, "OK", "measured"),
                 "c": BaselineResult("c", "polybench", "cpu", None, "RUNTIME_ERROR", "measured")}
    scores, excluded = task_scores(prompts, samples, baselines, (1, 2))
    assert [e["prompt_id"] for e in excluded] == ["c"]  # no baseline: no made-up speedup
    (s,) = scores
    assert s.prompts == 2 and s.samples == 4
    assert s.pass_at["1"] == pytest.approx((0.5 + 0.0) / 2) and s.pass_at["2"] == pytest.approx((1.0 + 0.0) / 2)
    assert s.speedup_at["1"] == pytest.approx((1.0 + 0.0) / 2) and s.speedup_at["2"] == pytest.approx((2.0 + 0) / 2)
    assert s.verdicts == {"OK": 1, "WRONG_ANSWER": 2, "COMPILE_ERROR": 1}


def _fake_stage(d: Path, stage: str, metrics: dict, **cfg) -> None:
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "stage_config.json").write_text(json.dumps({"stage": stage, **cfg}))
    (d / "metrics.json").write_text(json.dumps(metrics))


def test_stage_metrics_and_run_dir(tmp_path):
    w = tmp_path / "run"
    _fake_stage(w / "sft", "SFTStageConfig", {"eval_perplexity": 1.62}, model_name_or_path="embedded")
    _fake_stage(w / "reward_model", "RewardStageConfig", {"eval_accuracy": 0.93})
    _fake_stage(w / "rlpf", "RLPFStageConfig", {"eval_mean_reward": 1.8, "eval_kl": 0.29},
                reward_model_path="elsewhere/reward_model")  # recorded relative to another cwd
    _fake_stage(w / "dpa", "DPAStageConfig", {"eval_accuracy": 0.87})
    models = models_from_run_dir(w, prefix="DS")
    assert [m.label for m in models] == ["DS", "DS+SFT", "DS+RLPF", "DS+DPA"] and models[0].ref == "embedded"
    assert [m.label for m in models_from_run_dir(w)] == ["base", "+SFT", "+RLPF", "+DPA"]
    assert finetune_metrics(str(w / "sft"))["perplexity"] == 1.62
    assert finetune_metrics(str(w / "rlpf")) == {"stage": "rlpf", "run_dir": str(w / "rlpf"), "mean_reward": 1.8,
                                                 "kl": 0.29, "rm_accuracy": 0.93}
    assert finetune_metrics(str(w / "dpa"))["dpa_accuracy"] == 0.87
    assert finetune_metrics("deepseek-ai/deepseek-coder-6.7b-base") == {}
    with pytest.raises(FileNotFoundError):
        models_from_run_dir(tmp_path / "nothing")


def test_report_renders_from_json(tmp_path):
    from perfalign.evaluation.task_scores import PromptScore, TaskScore

    per = [PromptScore(k, 2, 1, {"1": 0.5}, {"1": s}, 0.01, [2 * s, 0.0], {"OK": 1, "WRONG_ANSWER": 1})
           for k, s in (("gemm", 1.5), ("2mm", 0.5))]
    scores = [TaskScore(m, t, "cpu", 2, 4, {"1": 0.5}, {"1": 1.0}, {"OK": 2, "WRONG_ANSWER": 2}, per)
              for m in ("base", "+SFT") for t in ("pareval-serial", "polybench")]
    report = EvalReport("now", {"node": "h", "cpu": "c", "cores": 2}, {"backend": "bwrap", "isolated": True},
                        _config().to_dict(), [{"label": "base", "ref": "embedded", "finetune": {}},
                                              {"label": "+SFT", "ref": "r/sft",
                                               "finetune": {"stage": "sft", "perplexity": 1.6}}],
                        scores, skipped=[{"task": "pareval-mpi", "prompt_id": "x-mpi", "reason": "no MPI"}])
    paths = write_report(report, tmp_path)
    for key in ("json", "markdown", "pass", "speedup", "polybench"):
        assert paths[key].is_file() and paths[key].stat().st_size > 0
    md = paths["markdown"].read_text()
    assert "| +SFT | ParEval Serial | CPU time | 2 | 4 | 0.500 | 1.000 |" in md
    assert "1.600" in md and "no MPI" in md and "fig_polybench_at_1.png" in md
    again = load_report(paths["json"])
    assert again.score("+SFT", "polybench").per_prompt[0].speedup_at["1"] == 1.5


def test_default_data_dirs_exist():
    assert (DEFAULT_PAREVAL_DIR / "sum_of_min" / "task.json").is_file()
    assert (DEFAULT_POLYBENCH_DIR / "gemm" / "task.json").is_file()
