"""Evaluation pieces without running programs: bundled task data as probe problems, prompts, the
controls' source, code extraction, scoring, stage metrics, report rendering and input errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfalign.common.prompts import RESPONSE_MARKER
from perfalign.config.tables import preset
from perfalign.evaluation import EvalConfig, ModelSpec, load_report, write_report
from perfalign.evaluation.config import DEFAULT_PAREVAL_DIR, DEFAULT_POLYBENCH_DIR
from perfalign.evaluation.records import BaselineResult, EvalReport, SampleResult, extract_candidate
from perfalign.evaluation.run_models import finetune_metrics, models_from_run_dir
from perfalign.evaluation.task_scores import task_scores
from perfalign.evaluation.tasks.registry import load_tasks
from perfalign.measure.cxxsig import parse_signature
from perfalign.measure.probe import ProbeProblem, normalize_candidate, run_twice

ORACLE = [ModelSpec("o", "oracle:reference")]


def _config(**kw) -> EvalConfig:
    base = {"models": ORACLE, "tasks": ("pareval", "polybench"), "max_prompts_per_task": None, "num_samples": 2,
            "pareval_models": ("serial", "omp", "mpi")}  # the embedded profile runs serial only
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
        # the real suites' probe problems: the candidate its own TU, fresh secret inputs every call
        assert isinstance(p.spec, ProbeProblem) and p.spec.key == p.prompt_id and p.spec.clock == p.timing
        assert p.spec.threads == (2 if p.task == "pareval-omp" else 1) and p.spec.validate_calls == 2
        assert "perfalign_sample_call" in p.spec.drivers["T"] and "perfalign_reseed" in p.spec.drivers["T"]
        src = p.spec.candidate_source(p.references["reference"], "T")
        assert "perfalign_observe" not in src and "perfalign_cpu_now" not in src and "fingerprint" not in src
    omp = by_task["pareval-omp"][0]
    assert "#include <omp.h>" in omp.text and "Use OpenMP" in omp.text
    assert omp.spec.env == {"OMP_NUM_THREADS": "2"} and "-fopenmp" in omp.spec.compile_flags
    serial = by_task["pareval-serial"][0]
    assert "OpenMP" not in serial.text and "-fopenmp" not in serial.spec.compile_flags and serial.spec.env == {}
    gemm = next(p for p in by_task["polybench"] if p.prompt_id == "gemm")
    assert "Optimize the following C++ solution" in gemm.text and "kernel_gemm" in gemm.text
    assert "perfalign_saved_C" in gemm.references["slow"]  # the in-out array is restored for the second call


def test_limits_and_omp_threads_are_configurable():
    prompts, skipped = load_tasks(_config(max_prompts_per_task=2, omp_threads=3, pareval_models=("omp",)))
    assert [p.task for p in prompts].count("pareval-omp") == 2 and [p.task for p in prompts].count("polybench") == 2
    assert all(p.spec.threads == 3 and p.spec.env == {"OMP_NUM_THREADS": "3"} for p in prompts
               if p.task == "pareval-omp")
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
        preset("eval", models=ORACLE, tasks=("no-such-suite",)).validate()
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


def test_the_config_names_every_task_group():
    # EvalConfig's choices are the registry's tasks, in its order (config.py imports no task)
    from perfalign.evaluation.config import OPTIONAL_TASK_GROUPS, TASK_GROUPS
    from perfalign.evaluation.tasks.registry import TASKS

    assert TASK_GROUPS + OPTIONAL_TASK_GROUPS == tuple(TASKS)
    assert EvalConfig().tasks == TASK_GROUPS


def test_candidate_normalization_and_extraction():
    sig = "double f(std::vector<double> const& x)"
    assert normalize_candidate("double f(std::vector<double> const& x) { return 1; }", "f", sig).startswith("double f(")
    assert normalize_candidate("return 1.0;", "f", sig) == f"{sig} {{\nreturn 1.0;\n}}\n"
    assert normalize_candidate("return 1.0;\n}", "f", sig) == f"{sig} {{\nreturn 1.0;\n}}\n"  # brings its brace
    assert extract_candidate("```cpp\nint x;\n```") == ("int x;", "cpp", "fence")
    assert extract_candidate("int x;") == ("int x;", None, "raw")
    assert extract_candidate("int x;", accept_unfenced=False) == (None, None, "none")
    assert extract_candidate("  \n") == (None, None, "none")


def test_controls_restore_the_outputs_between_the_two_runs():
    """The slow control runs the baseline twice on the same memory: outputs restored by value, a
    pointer output by its element count where given (else it is written before it is read)."""
    sig = parse_signature("void k(int n, double* C, const double* A, double* tmp, std::vector<double>& v)")
    ref, slow = run_twice(sig, "base::k", "namespace base { void k(int, double*, const double*, double*, "
                                         "std::vector<double>&) {} }", {"C": "n * n"})
    assert ref.rstrip().endswith("return base::k(n, C, A, tmp, v);\n}")
    assert "perfalign_saved_C(C, C + (n * n))" in slow and "perfalign_saved_v = v;" in slow
    assert "perfalign_saved_tmp" not in slow and "perfalign_saved_A" not in slow
    assert slow.count("base::k(n, C, A, tmp, v)") == 2
    sig = parse_signature("double f(std::vector<double> const& x)")
    _, slow = run_twice(sig, "base::f", "")
    assert "volatile auto perfalign_sink = base::f(x)" in slow and "perfalign_saved" not in slow


def test_bundled_task_errors_are_clear(tmp_path):
    from perfalign.evaluation.tasks.bundled import bundled_problem, read_task_dir
    from perfalign.measure.probe import Tolerance

    d = tmp_path / "p"
    d.mkdir()
    (d / "task.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_task_dir(d, ("function",), ())
    (d / "task.json").write_text(json.dumps({"function": "g", "signature": "double f()"}))
    with pytest.raises(FileNotFoundError, match="missing driver.cpp"):
        read_task_dir(d, ("function",), ("driver.cpp",))
    meta = read_task_dir(d, ("function", "signature"), ())
    with pytest.raises(ValueError, match="does not declare g"):
        bundled_problem(d, meta, "", suite="pareval", model="serial", prompt="", tolerance=Tolerance(), headers=())
    with pytest.raises(ValueError, match="serial or omp"):
        bundled_problem(d, meta, "", suite="pareval", model="mpi", prompt="", tolerance=Tolerance(), headers=())


def _sample(model, pid, i, correct, speedup, task="polybench", verdict=None):
    return SampleResult(model, task, pid, i, "fence", "cpp", verdict or ("OK" if correct else "WRONG_ANSWER"), correct,
                        0.1 if correct else None, 1.0, speedup, "x")


def test_scoring_by_hand():
    from perfalign.evaluation.records import EvalPrompt

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
    from perfalign.evaluation.records import PromptScore, TaskScore

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


def test_a_bundled_tolerance_is_checked(tmp_path):
    from perfalign.evaluation.tasks.bundled import task_tolerance
    from perfalign.measure.probe import Tolerance

    default = Tolerance(abs=1e-6, rel=1e-6)
    assert task_tolerance(tmp_path, {}, default) == default
    assert task_tolerance(tmp_path, {"tolerance": {"abs": 1e-3}}, default) == Tolerance(abs=1e-3)
    for bad in ([1e-3], {"absolute": 1e-3}, {"abs": "tight"}, {"rel": -1}):
        with pytest.raises(ValueError, match="task.json: tolerance"):
            task_tolerance(tmp_path, {"tolerance": bad}, default)
