"""The idiom task (perfdata/idioms.py) and on-policy pairs (alignment/onpolicy.py): numbers copied
from the prompt, wrong programs that fail, held-out combinations, the controlled task's machinery
on two kinds, and a model's own samples turned into measured pairs."""
from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pyarrow as pa
import pytest

from perfalign.alignment.proof import labelled_rows
from perfalign.common.equations import adaptive_margin
from perfalign.common.prompts import format_response
from perfalign.perfdata.controlled import (
    all_instances,
    build_controlled_task,
    load_controlled_task,
    sft_rows_per_kind,
)
from perfalign.perfdata.idioms import (
    FAMILIES,
    HELDOUT_PHRASING,
    IO_CONVENTION,
    instances,
    quick_instances,
    run_reference,
)
from perfalign.perfdata.shards import load_table
from perfalign.perfdata.triplets import TRIPLET_SCHEMA


def _fails(source: str, stdin: str, expected: str) -> bool:
    try:
        return run_reference(source, stdin) != expected
    except Exception:
        return True


def _words(text: str) -> list[str]:
    return "".join(ch if ch.isalnum() else " " for ch in text.lower()).split()


def test_held_out_prompts_are_an_unseen_phrasing_of_every_family_with_every_story():
    train, held = instances()
    assert (len(train), len(held)) == (144, 48)
    assert {(h.family.name, h.story) for h in held} == {(f.name, st) for f in FAMILIES for st in range(6)}
    assert {h.phrasing for h in held} == {HELDOUT_PHRASING} and HELDOUT_PHRASING not in {t.phrasing for t in train}
    assert {(t.family.name, t.story) for t in train} == {(h.family.name, h.story) for h in held}  # stories seen
    assert all_instances("idioms") == (train, held)
    with pytest.raises(ValueError, match="unknown family set 'idiom'; choose one of computations, idioms"):
        all_instances("idiom")
    for inst in train + held:  # the number is in the prompt and in every reference program
        assert str(inst.k) in inst.statement
        assert all(str(inst.k) in inst.program(kind) for kind in ("fast", "slow", "wrong"))
    # unseen words: no run of three words of a held-out phrasing is in a training phrasing of its family
    for fam in FAMILIES:
        *seen, new = (_words(p) for p in fam.phrasings)
        grams = {tuple(w[i:i + 3]) for w in seen for i in range(len(w) - 2)}
        assert not [new[i:i + 3] for i in range(len(new) - 2) if tuple(new[i:i + 3]) in grams], fam.name


def test_every_held_out_instance_tells_the_wrong_and_the_other_number_apart():
    for inst in instances()[1]:
        ins, outs = inst.tests()
        assert run_reference(inst.program("slow"), ins[0]) == outs[0]
        assert _fails(inst.program("wrong"), ins[0], outs[0])
        assert _fails(inst.program("fast", inst.other_k), ins[0], outs[0]), inst.problem_id


def test_every_statement_states_the_io_convention_once_at_its_end():
    train, held = instances()
    assert not any(ch.isdigit() for ch in IO_CONVENTION)  # the instance's number stays the only number
    assert "without any prompt" in IO_CONVENTION and "only the answer" in IO_CONVENTION
    for inst in train + held:
        assert inst.statement.endswith(" " + IO_CONVENTION) and inst.statement.count(IO_CONVENTION) == 1
        assert IO_CONVENTION in inst.prompt


def test_copying_the_number_is_required_and_the_wrong_program_fails():
    train, held = quick_instances()
    assert {i.family.name for i in train} == {f.name for f in FAMILIES}
    for inst in train + held:
        ins, outs = inst.tests()
        assert len(ins) == 2 and ins[0] != ins[1]
        assert run_reference(inst.program("slow"), ins[0]) == outs[0]  # fast and slow agree
        assert _fails(inst.program("wrong"), ins[0], outs[0])
        assert _fails(inst.program("fast", inst.other_k), ins[0], outs[0]), inst.problem_id


def test_inputs_are_deterministic_and_speed_is_not_length():
    from perfalign.perfdata import idioms

    inst = quick_instances()[0][0]
    before = inst.tests()
    idioms._tests.cache_clear()
    assert inst.tests() == before
    ratios = [len(i.program("fast")) / len(i.program("slow")) for i in quick_instances()[0]]
    assert sum(r > 1 for r in ratios) >= 3 and sum(r < 1 for r in ratios) >= 3  # fast is longer in some families


def _pick(pool, *names):
    first = {}
    for i in pool:
        first.setdefault(i.family.name, i)
    return [first[n] for n in names]


@pytest.fixture(scope="module")
def task(tmp_path_factory, sandbox):
    train, held = instances()
    return build_controlled_task(tmp_path_factory.mktemp("idm"), sandbox=sandbox, copies=1, repeats=1,
                                 train=_pick(train, "queue", "dedup"), heldout=_pick(held, "pairs"),
                                 family_set="idioms", sft_fast_share=0.25)


def test_sft_mix_has_the_set_share_of_fast_rows_per_instance():
    assert sft_rows_per_kind(("fast", "slow"), 2) == {"fast": 2, "slow": 2}  # the default: an even mix
    assert sft_rows_per_kind(("fast", "slow"), 1, 0.25) == {"fast": 1, "slow": 3}
    assert sft_rows_per_kind(("fast", "slow"), 2, 0.2) == {"fast": 2, "slow": 8}
    assert sft_rows_per_kind(("fast", "medium", "slow"), 1, 0.5) == {"fast": 2, "medium": 1, "slow": 1}
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match=f"sft_fast_share must be between 0 and 1 \\(exclusive\\), got {bad}"):
            sft_rows_per_kind(("fast", "slow"), 1, bad)


def test_the_controlled_machinery_builds_the_idiom_task(task):
    sft = load_table(task.data_dir, "sft_prompts").to_pylist()
    trip = load_table(task.data_dir, "triplets").to_pylist()
    # a slow-leaning SFT mix (a quarter fast rows, per instance); held-out rows and the pairs unchanged
    rows = sorted((r["problem_id"], r["sample_id"].split("/")[1]) for r in sft if r["split"] == "train")
    assert rows == sorted((i.problem_id, k) for i in task.train for k in ("fast", "slow", "slow", "slow"))
    assert sorted(r["sample_id"].split("/")[1] for r in sft if r["split"] == "eval") == ["fast", "slow"]
    assert json.loads((task.root / "controlled_task.json").read_text())["sft_fast_share"] == 0.25
    kinds = sorted(r["triplet_id"].split("/", 1)[1] for r in trip if r["split"] == "reward_train")
    assert {k.split(">")[1] for k in kinds} >= {"wrong"} and len(kinds) == 4
    assert len([r for r in trip if r["split"] == "rl_train"]) == 2
    assert not {i.prompt for i in task.heldout} & {r["prompt"] for r in trip if r["split"].endswith("_train")}
    for r in trip:
        if r["slow_is_correct"]:
            assert r["margin"] == pytest.approx(min(3.0, r["slow_runtime_s"] / r["fast_runtime_s"]))
    again = load_controlled_task(task.root)
    assert again.runtimes == task.runtimes and [i.problem_id for i in again.train] == [i.problem_id for i in task.train]
    assert type(again.train[0]) is type(task.train[0])


@pytest.mark.timing
def test_idiom_samples_are_classified_by_execution(task, sandbox):
    inst = task.heldout[0]
    texts = [format_response(inst.program(k), "python3") for k in ("fast", "slow", "wrong")]
    texts.append(format_response(inst.program("fast", inst.other_k), "python3"))  # did not copy the number
    rows = labelled_rows(task, inst, texts, sandbox, repeats=1)
    # the set program is fast, the list scan ~10x slower in the same run; one not using the number is wrong
    assert [r["label"] for r in rows] == ["fast_correct", "slow_correct", "incorrect", "incorrect"]


@pytest.mark.timing
def test_on_policy_pairs_from_hand_written_samples(task, sandbox):
    from perfalign.alignment.onpolicy import on_policy_pairs

    inst = next(i for i in task.train if i.family.name == "queue")
    k = inst.k
    loop = f"c = 0\nwhile q:\n    x = q.{{}}\n    c += 1\n    if x > {k}:\n        q.append(x - {k})\nprint(c)"
    read = "n = int(input())\nq = {}(map(int, input().split()))\n"
    own_fast = "from collections import deque\n" + read.format("deque") + loop.format("popleft()")
    own_slow = read.format("list") + loop.format("pop(0)")
    texts = [format_response(c, "python3") for c in (
        inst.program("fast"), own_fast, inst.program("slow"), own_slow, inst.program("fast"),  # a duplicate
        inst.program("wrong"), inst.program("fast", inst.other_k))] + ["no code here"]
    rows = on_policy_pairs(task, {inst.problem_id: texts}, sandbox, repeats=1)
    fast, slow = {inst.program("fast"), own_fast}, {inst.program("slow"), own_slow}
    assert {(r["fast"], r["slow"]) for r in rows} == {(f, s) for f in fast for s in slow}  # ~10x apart
    pa.Table.from_pylist(rows, schema=TRIPLET_SCHEMA)  # the triplet table's format
    for r in rows:
        assert r["margin"] == adaptive_margin(r["fast_runtime_s"], r["slow_runtime_s"], is_contest=True)
        assert r["speedup"] == pytest.approx(r["slow_runtime_s"] / r["fast_runtime_s"]) and r["group_solutions"] == 4
        assert r["split"] == "reward_train" and r["prompt"] == inst.prompt and len({r["triplet_id"] for r in rows}) == 4
    with pytest.raises(ValueError, match="training problems only"):
        on_policy_pairs(task, {task.heldout[0].problem_id: texts[:1]}, sandbox)
