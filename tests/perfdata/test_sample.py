"""The bundled CodeContests sample: shape, schema, and every solution's label verified by
running it in the sandbox (correct: OK on every test; incorrect: fails at least one)."""
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from perfalign.perfdata.codecontests import iter_problems
from perfalign.perfdata.records import Problem
from perfalign.sandbox import Job, Language, Limits, Verdict

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "codecontests_sample"


@pytest.fixture(scope="module")
def problems():
    items = list(iter_problems(str(SAMPLE / "data")))
    assert all(isinstance(i, Problem) for i in items), [i for i in items if not isinstance(i, Problem)]
    return items


def test_sample_shape(problems):
    assert len(problems) >= 30
    assert sum(p.held_out for p in problems) >= 10
    assert all(p.split == "test" for p in problems if p.held_out)
    langs = set()
    for p in problems:
        correct = [s for s in p.submissions if s.is_correct]
        assert len(correct) >= 5, p.name
        assert any(not s.is_correct for s in p.submissions), p.name
        assert p.public_tests and p.private_tests and p.generated_tests, p.name
        langs |= {s.language for s in correct}
    assert {Language.CPP, Language.PYTHON3, Language.JAVA} <= langs
    # exactly the deepmind/code_contests columns
    cols = set(pq.read_schema(SAMPLE / "data" / "train-00000-of-00001.parquet").names)
    assert {"name", "description", "public_tests", "private_tests", "generated_tests", "solutions",
            "incorrect_solutions", "time_limit", "memory_limit_bytes", "cf_tags", "difficulty", "source"} <= cols
    known = json.loads((SAMPLE / "known_order.json").read_text())
    assert set(known) == {p.name for p in problems}


def test_every_label_holds_when_run(problems, sandbox):
    jobs, meta = [], []
    for p in problems:
        limits = Limits(time_s=p.time_limit_s, memory_mb=p.memory_limit_mb)
        for s in p.submissions:
            jobs.append(Job(s.solution, s.language, p.tests, limits, repeats=1, stop_on_failure=True))
            meta.append((p.name, s))
    bad = []
    for i, r in sandbox.run_many(jobs, workers=2):
        name, s = meta[i]
        if s.is_correct and r.verdict is not Verdict.OK:
            bad.append(f"{name} correct #{s.index} ({s.language}): {r.verdict} {r.message[:200]}")
        if not s.is_correct and r.verdict is Verdict.OK:
            bad.append(f"{name} incorrect #{s.index} ({s.language}) passed every test")
        assert r.verdict is not Verdict.SANDBOX_ERROR, r.message
    assert not bad, "\n".join(bad)
