"""The controlled task (perfdata/controlled.py): held-out prompts really unseen, margins that
vary with the measured runtimes, samples classified by execution (alignment/proof.py), its
pipeline stage and its evaluation task group."""
from __future__ import annotations

import dataclasses
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from perfalign.alignment.proof import labelled_rows
from perfalign.common.prompts import extract_code, format_response
from perfalign.config.tables import preset
from perfalign.perfdata.controlled import (
    BIG_NS,
    CORRECT_KINDS,
    build_controlled_task,
    instances,
    load_controlled_task,
    quick_instances,
)
from perfalign.perfdata.shards import load_table


def test_held_out_instances_are_unseen_combinations_of_seen_parts():
    train, held = instances()
    assert (len(train), len(held)) == (96, 12)
    seen = {i.prompt for i in train}
    for h in held:
        assert h.prompt not in seen
        same = [t for t in train if t.computation is h.computation]
        assert any(t.phrasing == h.phrasing for t in same) and any(t.story == h.story for t in same)
    assert {h.computation.name for h in held} == {t.computation.name for t in train}  # 2 per computation


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    train, held = quick_instances()
    # held-out instances with the biggest test: closed form and generator ~3x apart (the smallest
    # test's ~1.3x is close enough for a loaded machine's noise to cross the fast threshold)
    held = [dataclasses.replace(i, big_n=max(BIG_NS)) for i in held]
    return build_controlled_task(tmp_path_factory.mktemp("ctl"), copies=1, repeats=1, train=train, heldout=held)


def test_stage_inputs_keep_held_out_prompts_out_of_training(task):
    sft = load_table(task.data_dir, "sft_prompts").to_pylist()
    trip = load_table(task.data_dir, "triplets").to_pylist()
    held = {i.prompt for i in task.heldout}
    assert not held & {r["prompt"] for r in sft if r["split"] == "train"}
    assert not held & {r["prompt"] for r in trip if r["split"].endswith("_train")}
    assert {r["prompt"] for r in trip if r["split"].endswith("_eval")} == held  # every eval metric: unseen
    margins = [r["margin"] for r in trip if r["split"] == "reward_train" and r["slow_is_correct"]]
    assert len({round(m, 2) for m in margins}) > len(margins) // 2 and min(margins) < 2.0  # not all lambda
    for r in trip:
        if r["slow_is_correct"]:
            assert r["margin"] == pytest.approx(min(3.0, r["slow_runtime_s"] / r["fast_runtime_s"]))
    assert load_controlled_task(task.root).runtimes == task.runtimes


@pytest.mark.timing
class _Recording:
    """The real sandbox, keeping what run_many measured so the test checks the classification
    against this run's own times (the references were timed earlier; the VM's speed drifts)."""

    def __init__(self, sandbox):
        self.sandbox, self.results = sandbox, {}

    def run_many(self, jobs, **kw):
        out = list(self.sandbox.run_many(jobs, **kw))
        self.results = {jobs[i].source: res for i, res in out}
        return out


def test_samples_are_classified_by_execution(task, sandbox):
    inst, kinds = task.heldout[0], (*CORRECT_KINDS, "wrong")
    texts = [format_response(inst.program(k), "python3") for k in kinds] + ["no code"]
    rec = _Recording(sandbox)
    rows = labelled_rows(task, inst, texts, rec, repeats=1)
    assert len(rec.results) == 4  # each program run once; the text without code runs nothing
    res = {k: rec.results[extract_code(t)[0]] for k, t in zip(kinds, texts)}
    assert not res["wrong"].ok
    times = {k: res[k].mean_cpu_time_s for k in CORRECT_KINDS}
    # fast labels exactly the correct samples under the stored threshold, by this run's times
    fast = {k: t < task.threshold_s(inst.problem_id) for k, t in times.items()}
    assert [r["label"] for r in rows] == [("fast_correct" if fast[k] else "slow_correct") for k in CORRECT_KINDS] + [
        "incorrect", "no_code"]
    assert [r["cpu_time_s"] for r in rows[:3]] == [times[k] for k in CORRECT_KINDS]  # what the speedups read
    assert [r["text"] for r in rows] == texts and rows[-1]["cpu_time_s"] is None
    assert min(times, key=times.get) == "fast"  # ~3x apart within one run: the order holds under drift


@pytest.mark.timing
def test_evaluation_task_group_scores_the_held_out_prompts(task, tmp_path):
    from perfalign.evaluation.evaluate import evaluate

    cfg = preset("eval", models=["fast=oracle:fast", "slow=oracle:slow"], tasks=("controlled",),
                 controlled_dir=str(task.root), controls=False, num_samples=2)
    report = evaluate(cfg, tmp_path / "eval")
    scores = {s.model: s for s in report.scores if s.task == "controlled"}
    assert {m: s.prompts for m, s in scores.items()} == {"fast": 2, "slow": 2}
    assert scores["fast"].pass_at["1"] == scores["slow"].pass_at["1"] == 1.0
    assert scores["fast"].speedup_at["1"] > 1.0 > scores["slow"].speedup_at["1"]
    assert "Controlled (held-out)" in (tmp_path / "eval" / "report.md").read_text()


def test_the_main_job_trains_on_the_controlled_task(monkeypatch, tmp_path):
    """The pipeline's controlled stage (flows.align.controlled) measures the task into its own
    folder; the triplets stage adds its training rows as extra shards, RLPF gets the task's tests,
    the held-out prompts stay out of every training split."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import perfalign.perfdata.controlled as controlled
    from perfalign.alignment.data import load_contest_problems, load_sft_rows, load_triplet_rows
    from perfalign.alignment.rlpf import rl_prompts
    from perfalign.config.tables import load_config
    from perfalign.flows.align import contest_dirs, stage_configs, triplets
    from perfalign.flows.align import controlled as build_controlled

    subset = quick_instances()
    monkeypatch.setattr(controlled, "instances", lambda: subset)  # 8 instances instead of 108
    (tmp_path / "syn" / "synthetic").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([
        dict(key=f"s{i}", problem=f"Synthetic task {i}.", language="python3", fast=f"f{i}()", slow=f"s{i}()",
             fast_cpu_time_s=0.01, slow_cpu_time_s=0.05, speedup=5.0) for i in range(20)]),
        tmp_path / "syn" / "synthetic" / "synthetic.parquet")
    out, ctl = tmp_path / "triplets", tmp_path / "controlled"
    settings = load_config(profile="embedded").triplets
    assert settings.controlled_task
    assert build_controlled(str(ctl), settings)["train_instances"] == 6
    res = triplets(None, str(tmp_path / "syn"), str(out), settings, str(ctl))
    added = res["stats"]["controlled_task"]["added_rows"]
    # 3 copies of 3 programs; the RL prompt, and the pairs of the two kinds kept (fast>medium,
    # fast>slow) that this run's measurement ordered that way (a pair measured the other way round
    # is named medium>fast and left out)
    meta = json.loads((ctl / "controlled_task.json").read_text())
    kept = sum(not rt[s] < rt["fast"] for pid in meta["train"] for rt in [meta["runtimes"][pid]]
               for s in ("medium", "slow"))
    assert added == {"sft_prompts": 6 * 3 * 3, "triplets": kept + 6} and kept >= 6
    held = {i.prompt for i in subset[1]}
    sft = load_sft_rows(out, "train")
    assert sum(r["problem_id"].startswith("ctl_") for r in sft) == 54 and not held & {r["prompt"] for r in sft}
    rl = rl_prompts(load_triplet_rows(out, ("rl_train",)))
    cfg = stage_configs(load_config(), str(out), str(tmp_path / "work"), contest_dirs(None, str(ctl)))["rlpf"]
    assert cfg.codecontests_dir == [str(ctl / "codecontests")]
    ids = {p.problem_id for p in rl if p.source == "contest"}
    assert len(ids) == 6 and ids <= set(load_contest_problems(cfg.codecontests_dir))
    # a rebuild without the task drops its shards
    triplets(None, str(tmp_path / "syn"), str(out), dataclasses.replace(settings, controlled_task=False))
    assert not list(out.glob("*/controlled*.parquet"))
    assert stage_configs(load_config(), str(out), str(tmp_path / "work"), contest_dirs(None, None))["rlpf"] \
        .codecontests_dir is None


def test_measuring_the_programs_reports_progress(sandbox):
    """The triplets stage's longest quiet part: its programs measured in the sandbox show progress."""
    from perfalign.common.progress import listening
    from perfalign.perfdata.controlled import MEASURING, measure_references

    seen: list[tuple[str, int, int]] = []
    with listening(lambda *a: seen.append(a)):
        runtimes = measure_references(quick_instances()[0][:1], sandbox, repeats=1)
    total = len(CORRECT_KINDS)
    assert len(runtimes) == 1 and [s for s in seen if s[0] == MEASURING] == [(MEASURING, d, total)
                                                                              for d in range(total + 1)]


def test_controlled_folders_have_cards_and_never_mix_tables(task):
    """Both folders of the task carry a card naming each table, so a directory read of a folder
    fails instead of mixing its two tables and ``load_dataset(folder, table)`` gives one table."""
    from test_layout import _assert_default, _assert_one_table

    from perfalign.perfdata import shards

    for folder, tables in ((task.codecontests_dir, ("submissions", "problems")),
                           (task.data_dir, ("triplets", "sft_prompts"))):
        for table in tables:
            (f,) = shards.shard_files(folder, table)
            _assert_one_table(folder, table, shards.read_schema(f), len(load_table(folder, table)))
        _assert_default(folder, tables[0])
        assert shards.card_written(folder)


def test_a_task_rebuilt_from_its_measurements_is_the_same_task(task, tmp_path, monkeypatch):
    """A new machine builds the task from an earlier build's controlled_task.json (runtimes and host
    calibration; alignment_proof.py --records) without measuring: the same stage inputs, thresholds
    and contest baselines. Runtimes that lack an instance are refused."""
    import perfalign.perfdata.controlled as controlled

    meta = json.loads((task.root / "controlled_task.json").read_text())
    assert "calibration" in meta
    monkeypatch.setattr(controlled, "measure_references", lambda *a, **k: pytest.fail("measured again"))
    again = build_controlled_task(tmp_path / "again", copies=1, repeats=1, train=task.train, heldout=task.heldout,
                                  measured=meta)
    assert again.runtimes == task.runtimes
    assert all(again.threshold_s(i.problem_id) == task.threshold_s(i.problem_id) for i in task.heldout)
    for table in ("triplets", "sft_prompts"):
        assert load_table(again.data_dir, table).to_pylist() == load_table(task.data_dir, table).to_pylist()
    assert load_table(again.codecontests_dir, "problems").to_pylist() == \
        load_table(task.codecontests_dir, "problems").to_pylist()
    with pytest.raises(ValueError, match="lack 1 instances"):
        build_controlled_task(tmp_path / "short", copies=1, repeats=1, train=task.train, heldout=task.heldout,
                              measured={**meta, "runtimes": dict(list(meta["runtimes"].items())[1:])})


def test_a_task_rebuilt_on_another_cpu_converts_its_thresholds_to_this_hosts_seconds(task, tmp_path):
    """Node names repeat across machines (every VM here is "vm"), CPU speeds do not: references measured
    on another CPU model (calibration 0.1 s) are read on this one (0.2 s) at twice their seconds, the
    contest table names the host that measured them (so the RL reward converts them too), and the
    factor is kept in controlled_task.json."""
    from types import SimpleNamespace

    from perfalign.perfdata.controlled import load_controlled_task
    from perfalign.sandbox.calibration import host_id

    meta = json.loads((task.root / "controlled_task.json").read_text())
    assert meta["scale"] == 1.0  # measured here
    elsewhere = {**meta, "calibration": {**meta["calibration"], "cpu_model": "Another CPU", "reference_cpu_s": 0.1}}
    here = SimpleNamespace(calibration=lambda: {"reference_cpu_s": 0.2})
    again = build_controlled_task(tmp_path / "again", sandbox=here, copies=1, repeats=1, train=task.train,
                                  heldout=task.heldout, measured=elsewhere)
    pid = task.heldout[0].problem_id
    assert again.scale == pytest.approx(2.0)
    assert again.threshold_s(pid) == pytest.approx(2 * task.threshold_s(pid))
    assert again.baseline_s(pid) == pytest.approx(2 * task.baseline_s(pid))
    hosts = set(load_table(again.codecontests_dir, "submissions").column("host").to_pylist())
    assert hosts == {host_id(meta["calibration"]["host"], "Another CPU")} and host_id() not in hosts
    assert load_controlled_task(again.root).scale == pytest.approx(2.0)
