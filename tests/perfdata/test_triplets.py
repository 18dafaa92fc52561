"""Triplets, SFT prompts and splits (perfdata/triplets.py) on synthetic fixture tables."""
from __future__ import annotations

import json
import math
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perfalign.common.prompts import FENCES, RESPONSE_MARKER, extract_code
from perfalign.perfdata.shards import load_table
from perfalign.perfdata.triplets import TRIPLET_SPLITS, TripletConfig, build_triplets, split_units


def write_table(root, name, rows):
    (root / name).mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), root / name / "00000-of-00001.parquet")


def make_codecontests(root, n_problems=40, n_heldout=3, seed=1):
    """Problems with C++ and Python submissions; every Python runtime exceeds every C++ one, so a
    cross-language comparison would be visible."""
    rng = random.Random(seed)
    problems, subs = [], []
    for i in range(n_problems):
        pid = f"p{i:03d}"
        problems.append(dict(problem_id=pid, name=f"{i}_A. Problem {i}", description=f"Statement of problem {i}.",
                             split="test" if i < n_heldout else "train", held_out=i < n_heldout, time_limit_s=2.0,
                             memory_limit_mb=256, test_inputs=["1\n"], test_outputs=["1\n"]))
        for lang, lo, hi in (("cpp", 0.01, 0.2), ("python3", 0.5, 2.0)):
            n = rng.randint(0, 12) if i % 7 else 1  # some groups too small for a pair
            for j in range(n):
                subs.append(dict(submission_id=f"{pid}-{lang}-{j}", problem_id=pid, language=lang,
                                 solution=f"// {pid} {lang} correct {j}", is_correct=True,
                                 runtime_s=round(rng.uniform(lo, hi), 5), verdict="OK", status="measured"))
            for j in range(rng.randint(0, 3)):
                subs.append(dict(submission_id=f"{pid}-{lang}-bad{j}", problem_id=pid, language=lang,
                                 solution=f"// {pid} {lang} incorrect {j}", is_correct=False, runtime_s=None,
                                 verdict="", status="not_run"))
        # noise that must be ignored: unmeasured correct code, an unsupported language
        subs.append(dict(submission_id=f"{pid}-cpp-rej", problem_id=pid, language="cpp", solution="// rejected",
                         is_correct=True, runtime_s=None, verdict="WRONG_ANSWER", status="rejected"))
        subs.append(dict(submission_id=f"{pid}-py2", problem_id=pid, language="python2", solution="print 1",
                         is_correct=True, runtime_s=0.001, verdict="OK", status="measured"))
    write_table(root, "problems", problems)
    write_table(root, "submissions", subs)
    return problems, subs


def make_synthetic(root, n=20):
    rows = []
    for i in range(n):
        problem = f"Synthetic task {i // 2}: compute something."  # pairs of samples share a problem
        lang = "cpp" if i % 2 else "python3"
        rows.append(dict(key=f"s{i:03d}", problem=problem, language=lang, fast=f"fast {i}", slow=f"slow {i}",
                         fast_cpu_time_s=0.01, slow_cpu_time_s=0.05, speedup=5.0))
    rows.append(dict(key="s-bad", problem="Broken", language="cpp", fast="same", slow="same",
                     fast_cpu_time_s=0.01, slow_cpu_time_s=0.01, speedup=1.0))
    rows.append(dict(key="s-slower", problem="Inverted", language="cpp", fast="a()", slow="b()",
                     fast_cpu_time_s=0.02, slow_cpu_time_s=0.01, speedup=0.5))
    write_table(root, "synthetic", rows)
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("trip")
    problems, subs = make_codecontests(root / "cc")
    synth = make_synthetic(root / "syn")
    out = build_triplets(root / "out", root / "cc", root / "syn", TripletConfig(seed=7))
    trip = load_table(out.out_dir, "triplets").to_pylist()
    sft = load_table(out.out_dir, "sft_prompts").to_pylist()
    return dict(root=root, out=out, trip=trip, sft=sft, problems=problems, subs=subs, synth=synth)


def _groups(subs):
    g = {}
    for s in subs:
        if s["is_correct"] and s["status"] == "measured" and s["language"] in ("cpp", "python3"):
            g.setdefault((s["problem_id"], s["language"]), []).append(s)
    return {k: sorted(v, key=lambda s: (s["runtime_s"], s["submission_id"])) for k, v in g.items()}


def test_deterministic_for_a_seed(built, tmp_path):
    root = built["root"]
    again = build_triplets(tmp_path / "a", root / "cc", root / "syn", TripletConfig(seed=7))
    assert load_table(again.out_dir, "triplets").equals(load_table(built["out"].out_dir, "triplets"))
    assert load_table(again.out_dir, "sft_prompts").equals(load_table(built["out"].out_dir, "sft_prompts"))
    other = build_triplets(tmp_path / "b", root / "cc", root / "syn", TripletConfig(seed=8))
    assert not load_table(other.out_dir, "triplets").equals(load_table(built["out"].out_dir, "triplets"))


def test_no_problem_in_two_splits_and_heldout_excluded(built):
    split_of = {}
    for row in built["trip"]:
        split_of.setdefault(row["unit_id"], set()).add(row["split"])
    for row in built["sft"]:
        split_of.setdefault(row["unit_id"], set()).add("sft_" + row["split"])
    assert all(len(s) == 1 for s in split_of.values()), {u: s for u, s in split_of.items() if len(s) > 1}
    heldout = {p["problem_id"] for p in built["problems"] if p["held_out"]}
    assert heldout == set(built["out"].stats["heldout"]["problem_ids"])
    assert not heldout & {r["problem_id"] for r in built["trip"] + built["sft"]}
    # A synthetic problem statement shared by two samples is one unit: both land in the same split.
    by_problem = {}
    for r in built["trip"] + built["sft"]:
        if r["source"] == "synthetic":
            by_problem.setdefault(r["unit_id"], set()).add(r.get("split"))
    assert all(len(v) == 1 for v in by_problem.values())


def test_split_fractions_and_stratification():
    units = {"contest": [f"c{i}" for i in range(1000)], "synthetic": [f"s{i}" for i in range(200)]}
    split = split_units(units, TripletConfig(seed=3))
    count = {}
    for u, s in split.items():
        count.setdefault(s, {"contest": 0, "synthetic": 0})["contest" if u.startswith("c") else "synthetic"] += 1
    for src, n in (("contest", 1000), ("synthetic", 200)):
        sft = count["sft_train"][src] + count["sft_eval"][src]
        reward = count["reward_train"][src] + count["reward_eval"][src]
        rl = count["rl_train"][src] + count["rl_eval"][src]
        assert sft == round(0.4 * n)
        assert reward == round(0.66 * (n - sft))
        assert rl == n - sft - reward
        for stage, total in (("sft", sft), ("reward", reward), ("rl", rl)):
            assert count[f"{stage}_eval"][src] == round(0.05 * total)
    for s, c in count.items():  # D has 1000:200 -> every split keeps ~5/6 contest
        assert abs(c["contest"] / (c["contest"] + c["synthetic"]) - 1000 / 1200) < 0.02, s


def test_contest_triplets_follow_the_recipe(built):
    groups = _groups(built["subs"])
    incorrect_ids = {s["submission_id"]: s for s in built["subs"] if not s["is_correct"]}
    contest = [t for t in built["trip"] if t["source"] == "contest"]
    assert contest and {t["split"] for t in built["trip"]} <= set(TRIPLET_SPLITS)
    n_bad = 0
    for t in contest:
        sols = groups[(t["problem_id"], t["language"])]
        ids = [s["submission_id"] for s in sols]
        assert t["fast_id"] in ids[:5], "d_f must be one of the 5 fastest"
        assert t["fast_runtime_s"] == sols[ids.index(t["fast_id"])]["runtime_s"]
        assert t["median_runtime_s"] == pytest.approx(sorted(s["runtime_s"] for s in sols)[len(sols) // 2]
                                                      if len(sols) % 2 else
                                                      sum(sorted(s["runtime_s"] for s in sols)
                                                          [len(sols) // 2 - 1:len(sols) // 2 + 1]) / 2)
        if t["slow_is_correct"]:
            slow_half = ids[len(ids) - math.ceil(len(ids) * 0.5):]
            assert t["slow_id"] in slow_half, "d_s must be among the slowest 50%"
            assert t["fast_runtime_s"] < t["slow_runtime_s"]
            assert t["margin"] == pytest.approx(min(3.0, t["slow_runtime_s"] / t["fast_runtime_s"]))
        else:
            n_bad += 1
            bad = incorrect_ids[t["slow_id"]]
            assert (bad["problem_id"], bad["language"]) == (t["problem_id"], t["language"])
            assert t["slow"] == bad["solution"] and t["slow_runtime_s"] is None
            assert t["margin"] == 3.0  # incorrect d_s: treated as infinitely slow -> lambda
        # same language: the C++ and Python runtimes never mix
        assert t["fast"].startswith(f"// {t['problem_id']} {t['language']}")
    assert n_bad == round(0.05 * len(contest)) == built["out"].stats["incorrect_replacements"]["done"]
    # Up to triplets_per_group distinct pairs per (problem, language)
    per_group = {}
    for t in contest:
        per_group.setdefault((t["problem_id"], t["language"]), []).append((t["fast_id"], t["slow_id"]))
    assert all(len(v) <= 2 and len(set(v)) == len(v) for v in per_group.values())


def test_synthetic_triplets_and_margin_zero(built):
    syn = [t for t in built["trip"] if t["source"] == "synthetic"]
    assert syn
    pairs = {r["key"]: r for r in built["synth"]}
    for t in syn:
        assert t["margin"] == 0.0
        assert (t["fast"], t["slow"]) == (pairs[t["problem_id"]]["fast"], pairs[t["problem_id"]]["slow"])
    assert not {"s-bad", "s-slower"} & {t["problem_id"] for t in built["trip"] + built["sft"]}
    assert built["out"].stats["dropped"]["synthetic_not_faster"] == 1
    assert built["out"].stats["dropped"]["synthetic_invalid_pair"] == 1


def test_sft_prompts_listing1(built):
    groups = _groups(built["subs"])
    kinds = {r["kind"] for r in built["sft"]}
    assert kinds == {"instruction", "optimization"}
    assert {r["split"] for r in built["sft"]} == {"train", "eval"}
    for r in built["sft"]:
        assert r["prompt"].startswith("### Instruction:\n") and r["prompt"].endswith(RESPONSE_MARKER)
        assert r["completion"].startswith("```" + FENCES[r["language"]] + "\n") and r["completion"].endswith("```")
        code, lang = extract_code(r["completion"])
        assert lang == r["language"]
        if r["source"] != "contest":
            continue
        sols = groups[(r["problem_id"], r["language"])]
        assert code in [s["solution"] for s in sols[:5]], "the response is one of the 5 fastest"
        if r["kind"] == "optimization":
            slow33 = [s["solution"] for s in sols[len(sols) - max(1, math.ceil(len(sols) * 0.33)):]]
            assert any(s in r["prompt"] for s in slow33)


def test_stats_json(built):
    stats = json.loads(built["out"].stats_path.read_text())
    assert stats["totals"]["triplets"] == len(built["trip"])
    assert stats["totals"]["sft_prompts"] == len(built["sft"])
    assert stats["dropped"]["submissions_language_python2"] > 0
    assert stats["dropped"]["correct_submissions_not_measured_ok"] > 0
    assert 0 < stats["contest_unit_fraction"]["D"] < 1


def test_held_out_count_tops_up(built, tmp_path):
    root = built["root"]
    out = build_triplets(tmp_path / "o", root / "cc", None, TripletConfig(seed=7, held_out_count=10))
    held = out.stats["heldout"]["problem_ids"]
    assert len(held) == 10 and {"p000", "p001", "p002"} <= set(held)
    assert not set(held) & {r["problem_id"] for r in load_table(out.out_dir, "triplets").to_pylist()}


def test_bad_inputs_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="needs codecontests_dir"):
        build_triplets(tmp_path / "o")
    with pytest.raises(FileNotFoundError, match="no table 'problems'"):
        build_triplets(tmp_path / "o", tmp_path / "missing")
    write_table(tmp_path / "cc", "problems", [dict(problem_id="a", description="d")])
    write_table(tmp_path / "cc", "submissions", [dict(submission_id="x")])
    with pytest.raises(ValueError, match="lacks columns"):
        build_triplets(tmp_path / "o", tmp_path / "cc")
    with pytest.raises(ValueError, match="sft_fraction"):
        build_triplets(tmp_path / "o", tmp_path / "cc", config=TripletConfig(sft_fraction=1.5))


def test_stage_loaders_read_the_outputs(built):
    from perfalign.alignment.data import load_sft_rows, load_triplet_rows, preference_rows
    from perfalign.alignment.rlpf import rl_prompts

    d = built["out"].out_dir
    assert len(load_sft_rows(d, "train")) + len(load_sft_rows(d, "eval")) == len(built["sft"])
    align = load_triplet_rows(d, ("reward_train", "rl_train"))
    pairs = preference_rows(align, 3.0)
    assert all(p["chosen"].startswith("```") and p["rejected"].startswith("```") for p in pairs)
    assert [p["margin"] for p in pairs] == pytest.approx([t["margin"] for t in align])
    prompts = rl_prompts(load_triplet_rows(d, ("rl_train",)))
    assert len({(p.problem_id, p.language) for p in prompts}) == len(prompts)
    with pytest.raises(ValueError, match="no triplets"):
        load_triplet_rows(d, ("nope",))


def _twin_codecontests(root, n_pairs=20):
    """Problem pairs whose statements differ only in case, spacing and punctuation (Codeforces
    Div. 1 / Div. 2 twins), plus a twin of each held-out problem; every group has 12 solutions."""
    problems, subs = [], []

    def add(pid, description, held_out=False):
        problems.append(dict(problem_id=pid, name=pid, description=description, split="test" if held_out else "train",
                             held_out=held_out, time_limit_s=2.0, memory_limit_mb=256, test_inputs=["1\n"],
                             test_outputs=["1\n"]))
        for j in range(12):
            subs.append(dict(submission_id=f"{pid}-{j}", problem_id=pid, language="cpp", solution=f"// {pid} {j}",
                             is_correct=True, runtime_s=0.01 * (j + 1), verdict="OK", status="measured"))

    for i in range(n_pairs):
        add(f"{1000 + i}_A", f"Count the pairs in array {i}.\n\nPrint the answer.")
        add(f"{1001 + i}_C", f"count  the pairs in array {i}:  print the ANSWER")
    for i in range(3):
        add(f"held{i}", f"A held-out task number {i}.", held_out=True)
        add(f"twin{i}", f"a held out task number {i}", held_out=False)
    write_table(root, "problems", problems)
    write_table(root, "submissions", subs)


def test_statement_twins_share_a_split_and_never_shadow_heldout(tmp_path):
    from perfalign.perfdata.triplets import normalize_statement

    assert normalize_statement("Count  the PAIRS,\n in array 3.") == normalize_statement("count the pairs in array 3")
    _twin_codecontests(tmp_path / "cc")
    write_table(tmp_path / "syn", "synthetic", [
        dict(key="s-leak", problem="A HELD-OUT task number 1!", language="cpp", fast="f()", slow="s()",
             fast_cpu_time_s=0.01, slow_cpu_time_s=0.05, speedup=5.0),
        dict(key="s-twin", problem="Count the pairs in array 4.  Print the answer.", language="cpp", fast="f()",
             slow="s()", fast_cpu_time_s=0.01, slow_cpu_time_s=0.05, speedup=5.0)])
    out = build_triplets(tmp_path / "out", tmp_path / "cc", tmp_path / "syn", TripletConfig(seed=3))
    rows = load_table(out.out_dir, "triplets").to_pylist() + load_table(out.out_dir, "sft_prompts").to_pylist()
    placed: dict[int, set] = {}
    for r in rows:
        if r["source"] == "contest" and r["problem_id"][0].isdigit():
            i = int(r["problem_id"].split("_")[0]) - (1000 if r["problem_id"].endswith("_A") else 1001)
            placed.setdefault(i, set()).add(("" if "margin" in r else "sft_") + r["split"])
    assert len(placed) == 20 and all(len(v) == 1 for v in placed.values()), placed  # each twin pair: one split
    by_unit: dict[str, set] = {}
    for r in rows:
        by_unit.setdefault(r["unit_id"], set()).add(r["problem_id"])
    assert sorted(len(v) for v in by_unit.values() if len(v) > 1) == [2] * 19 + [3]  # twins (+ one synthetic)
    ids = {r["problem_id"] for r in rows}
    assert not ids & {"twin0", "twin1", "twin2", "s-leak"}  # a held-out problem's twin never trains
    assert out.stats["heldout_twins_dropped"] == ["twin0", "twin1", "twin2"]
    assert out.stats["dropped"]["synthetic_twin_of_heldout"] == 1
    assert out.stats["statement_twins"] == {"contest_problems_sharing_a_statement": 20,
                                            "synthetic_joined_contest_units": 1}


def test_small_groups_are_excluded_or_flagged(built, tmp_path):
    root = built["root"]
    assert built["trip"] and all(t["group_solutions"] >= 10 for t in built["trip"] if t["source"] == "contest")
    assert built["out"].stats["dropped"]["small_groups_excluded"] > 0
    flagged = build_triplets(tmp_path / "f", root / "cc", None, TripletConfig(seed=7, small_groups="flag"))
    rows = load_table(flagged.out_dir, "triplets").to_pylist()
    small = [t for t in rows if t["group_solutions"] < 10]
    assert small and flagged.stats["small_groups"] == {"policy": "flag", "min_solutions": 10,
                                                       "triplets_flagged": len(small)}
    with pytest.raises(ValueError, match="small_groups"):
        build_triplets(tmp_path / "x", root / "cc", config=TripletConfig(small_groups="keep"))


def test_a_counted_dataset_ranks_by_its_counts_and_says_so(tmp_path):
    """A build measured with a deterministic clock: groups are ranked and margins taken
    on the count labels (runtime_s is CPU time under valgrind there), every triplet names its clock,
    and a label in another clock than its group's is dropped with a reason, never mixed in."""
    problems, subs = make_codecontests(tmp_path / "cc", n_problems=12, n_heldout=1)
    rng = random.Random(3)
    for s in subs:
        if s["status"] == "measured" and s["language"] == "cpp":
            s["clock"] = "instructions"
            # counts ordered against the CPU times: ranking by runtime_s would pick the opposite pair
            s["test_clock_counts"] = [1e9 - s["runtime_s"] * 1e9 + rng.random()]
        else:
            s["clock"], s["test_clock_counts"] = "cpu", None
    stray = next(s for s in subs if s["language"] == "cpp" and s["status"] == "measured" and s["problem_id"] != "p000")
    subs.append(dict(stray, submission_id="stray", clock="cpu", test_clock_counts=None))
    write_table(tmp_path / "cc", "submissions", subs)
    out = build_triplets(tmp_path / "t", codecontests_dir=tmp_path / "cc")
    rows = load_table(tmp_path / "t", "triplets").to_pylist()
    counted = [r for r in rows if r["language"] == "cpp"]
    assert counted and all(r["clock"] == "instructions" for r in counted)
    assert all(r["clock"] == "cpu" for r in rows if r["language"] == "python3")
    count_of = {s["submission_id"]: s["test_clock_counts"][0] for s in subs if s.get("test_clock_counts")}
    for r in counted:
        if r["slow_is_correct"]:
            assert r["fast_runtime_s"] == count_of[r["fast_id"]] < r["slow_runtime_s"] == count_of[r["slow_id"]]
    assert out.stats["dropped"]["correct_submissions_other_clock"] >= 1
