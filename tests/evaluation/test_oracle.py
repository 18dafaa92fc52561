"""End to end through the sandbox: the oracle pseudo-models prove the probe harness and metrics on
the bundled samples — pass@1 = 1 and speedups at the known ratios within the run's own error —
and the tiny local model goes through the real from_pretrained / generate path into a written
report."""
from __future__ import annotations

import json
import math
import shutil

import pytest

from perfalign.config.tables import preset
from perfalign.evaluation import ModelSpec, evaluate, models_from_run_dir

ORACLES = [ModelSpec("oracle-ref", "oracle:reference"), ModelSpec("oracle-slow", "oracle:slow"),
           ModelSpec("oracle-fast", "oracle:fast")]
# Contest programs run ~1-10 ms, mostly process start-up; the oracles' known ratios are the dataset's
# (measured at build time, under other load): a fixed band. The probe tasks' band is the run's own: SIGMAS times the
# harness's estimated relative standard error of each speedup (calibrated on the sweeps of docs/evaluation.md:
# |error|/SE median 0.62, p90 1.88).
CONTEST_TOLERANCE = 2.0
SIGMAS = 4.0
# PolyBench's slow oracle is 0.5 only as a model: the kernel twice plus its arrays' save and restore, the two calls
# compiled together. Its true ratio moves with the machine state: gemm read 0.39-0.65 natively across sessions
# (docs/measurements/price-2026-11-29/gemm_modes*.txt, gemm_truth.json), so no run's own error
# can judge it against 0.5: its band is the model's. The reference oracle (the same program, truth exactly 1) keeps
# the run's own band.
SLOW_MODEL_TOLERANCE = 1.3


@pytest.fixture(scope="module")
def ccperf(tmp_path_factory):
    """A CodeContests-Perf folder of two held-out problems, measured here (3 repeats)."""
    from perfalign.perfdata.perf import BuildSettings
    from perfalign.perfdata.perf_build import build

    out = tmp_path_factory.mktemp("ccperf")
    build("data/codecontests_sample/data/test-00000-of-00001.parquet", out, BuildSettings(repeats=3),
          limit_problems=2, workers=2)
    return out


def _oracle_eval(ccperf, out):
    cfg = preset("eval", models=ORACLES, codecontests_dir=str(ccperf), max_prompts_per_task=2, num_samples=2,
                 tasks=("codecontests", "pareval", "polybench"),
                 pareval_models=("serial", "omp", "mpi"))  # the embedded profile runs serial only
    return evaluate(cfg, out), out


@pytest.fixture(scope="module")
def oracle_report(ccperf, tmp_path_factory):
    return _oracle_eval(ccperf, tmp_path_factory.mktemp("oracle-eval"))


def test_oracle_pass_at_1_is_one_everywhere(oracle_report):
    report, _ = oracle_report
    tasks = {s.task for s in report.scores}
    assert tasks == {"codecontests", "pareval-serial", "pareval-omp", "polybench"}
    for m in ORACLES:
        for t in tasks:
            s = report.score(m.label, t)
            assert s.prompts == 2 and s.pass_at["1"] == 1.0, (m.label, t, s.verdicts)


@pytest.mark.timing
def test_oracle_speedups_match_the_known_ratios(ccperf, tmp_path):
    # its own run (function scope): a miss under load is measured again (conftest's timing policy)
    report, out = _oracle_eval(ccperf, tmp_path / "oracle-eval")
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    rel_se = {(x["model"], x["prompt_id"]): x["rel_se"] for x in samples if x["index"] == 0}
    for o in report.oracle_checks:
        assert o["correct"], o
        if "unmeasurable" in o["flags"] and o["task"] != "codecontests":
            continue  # withheld as too noisy on this host now: an honest answer (how often is a benchmark's figure)
        if o["expected_speedup"] is None:  # a known faster solution, ratio not known in advance
            assert o["measured_speedup"] > 0
            continue
        if o["task"] == "codecontests":
            tol = CONTEST_TOLERANCE
        else:
            se = rel_se[(o["model"], o["prompt_id"])]
            assert se is not None and o["round_speedups"], o
            tol = math.exp(SIGMAS * se)
            if o["expected_speedup"] != 1.0:
                tol = max(tol, SLOW_MODEL_TOLERANCE)
            if "driver_bound" in o["flags"]:  # held to the payoff ceiling, max(1, ...) (docs/evaluation.md): at most
                # the truth. histogram-omp's driver fills 2^23 doubles per call, over half the function's work:
                # its ceiling is 1, and its fast oracle (1.9x in-process on an idle CI machine) scores 1
                assert 1.0 <= o["measured_speedup"] <= o["expected_speedup"] * tol, (o, tol)
                continue
        assert o["expected_speedup"] / tol <= o["measured_speedup"] <= o["expected_speedup"] * tol, (o, tol)
    slow = report.score("oracle-slow", "polybench").speedup_at["1"]
    assert 0.5 / SLOW_MODEL_TOLERANCE <= slow <= 0.5 * SLOW_MODEL_TOLERANCE  # the baseline doing its work twice
    # 2mm and 3mm with i-k-j loops beat the i-j-k originals (~2x idle, 1.17x seen under CI load): the
    # timing path must at least order the known-fast oracle far above the known-slow one of the same run
    fast = report.score("oracle-fast", "polybench").speedup_at["1"]
    assert fast > 1.5 * slow, (fast, slow)


def test_oracle_report_files(oracle_report):
    report, out = oracle_report
    for f in ("report.md", "report.json", "samples.jsonl", "fig_pass_at_1.png", "fig_speedup_at_1.png",
              "fig_polybench_at_1.png", "generations/oracle-ref.jsonl"):
        assert (out / f).is_file(), f
    md = (out / "report.md").read_text()
    assert "## Oracle checks" in md and "ParEval MPI" in md and ("mpicxx" in md or "--pareval-dir" in md)
    # every report carries its controls, and every baseline was measured in this run
    assert "## Controls" in md and "control:reference" in md and "control:slow" in md
    assert {b["source"] for b in report.baselines} == {"measured (median submission re-run)", "measured"}
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert len(lines) == (3 + 2) * 8 * 2  # three oracles and the two controls


def test_tiny_models_end_to_end(ccperf, tmp_path):
    """The embedded base model and a copy of it dressed as an SFT run directory: real
    generation, every sample executed or classified, fine-tuning metrics in the report."""
    from perfalign.alignment.models import embedded_base_model

    run = tmp_path / "run"
    shutil.copytree(embedded_base_model(), run / "sft")
    (run / "sft" / "stage_config.json").write_text(json.dumps({"stage": "SFTStageConfig",
                                                                "model_name_or_path": "embedded"}))
    (run / "sft" / "metrics.json").write_text(json.dumps({"eval_perplexity": 3.25}))
    cfg = preset("eval", models=models_from_run_dir(run), codecontests_dir=str(ccperf), max_prompts_per_task=1,
                 max_new_tokens=32, pareval_models=("omp",), num_samples=2,
                 tasks=("codecontests", "pareval", "polybench"))
    report = evaluate(cfg, tmp_path / "eval")
    assert [m["label"] for m in report.models] == ["base", "+SFT", "control:reference", "control:slow"]
    assert [m["kind"] for m in report.models] == ["hf", "hf", "control", "control"]
    assert report.models[0]["ref"] == str(embedded_base_model())  # the exact model SFT started from
    assert report.models[1]["finetune"]["perplexity"] == 3.25
    assert len(report.scores) == 4 * 3
    for s in report.scores:
        assert s.samples == 2 and 0.0 <= s.pass_at["1"] <= 1.0 and s.speedup_at["1"] >= 0.0
        assert sum(s.verdicts.values()) == 2
    # the tiny models score 0, the controls show the harness works all the same
    for task in ("codecontests", "pareval-omp", "polybench"):
        assert report.score("control:reference", task).pass_at["1"] == 1.0
    samples = [json.loads(x) for x in (tmp_path / "eval" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 4 * 3 * 2 and all(x["verdict"] for x in samples)
    assert all(x["speedup"] == 0.0 for x in samples if not x["correct"])
    gens = [json.loads(x) for x in (tmp_path / "eval" / "generations" / "base.jsonl").read_text().splitlines()]
    assert len(gens) == 3 and all(len(g["responses"]) == 2 for g in gens)
    assert "3.250" in (tmp_path / "eval" / "report.md").read_text()
