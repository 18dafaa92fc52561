"""The slow tail: a submission labelled correct that runs past its problem's time limit on this
host is labelled with its measured runtime and flagged ``past_limit`` (up to ``limit_cap`` x the
limit), never rejected for it; past the cap it is a `time` reject; incorrect stays rejected.

Real data: "1004_A. Range Sums" of the bundled sample and its accepted solutions, the naive
Python one (the slow tail) and a prefix-sum one (its fast twin), on the sample's own tests. The
limits are set from the slow solution's CPU time measured in the same run, with a 1.5-2x margin
on each side, so the outcome does not depend on the host's speed or load."""
from __future__ import annotations

import json
from pathlib import Path

from perfalign.flows.summaries import flatten, jsonable
from perfalign.perfdata import perf, perf_batch, perf_plan, shards
from perfalign.perfdata.codecontests import iter_problems
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.perf_build import build
from perfalign.perfdata.records import Problem
from perfalign.perfdata.schema import arrow_schema
from perfalign.sandbox import CompileInfo, Job, Limits, RunResult, Sandbox, Verdict
from perfalign.sandbox import TestResult as Measured
from perfalign.sandbox.clock import SLOWDOWN, STARTUP_S
from perfalign.sandbox.types import Language

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "codecontests_sample" / "data"
PROBLEM = "1004_A. Range Sums"


def _range_sums() -> tuple[Problem, str, str, list, float]:
    """The problem, its slowest and fastest accepted Python 3 solutions (by their CPU time on the
    largest test, measured here) and that time with the tests: the smallest and the largest."""
    p = next(p for p in iter_problems(str(SAMPLE / "train-00000-of-00001.parquet"), limit=4)
             if isinstance(p, Problem) and p.problem_id == PROBLEM)
    tests = sorted(p.tests, key=lambda t: len(t.input))
    tests = [tests[0], tests[-1]]
    py = [s.solution for s in p.submissions if s.is_correct and s.language is Language.PYTHON3]
    with Sandbox() as sb:
        runs = [sb.run_job(Job(code, Language.PYTHON3, tests[1:], Limits(time_s=10), 1)) for code in py]
    assert all(r.ok for r in runs), [r.message for r in runs]
    times = [r.tests[0].cpu_time_s for r in runs]
    slow, fast = max(range(len(py)), key=times.__getitem__), min(range(len(py)), key=times.__getitem__)
    assert times[slow] > 5 * times[fast], times  # the naive solution and a prefix-sum one
    return p, py[slow], py[fast], tests, times[slow]


def _row(name: str, p: Problem, tests: list, limit_s: float, solutions, incorrect=()) -> dict:
    return {"name": name, "description": p.description,
            "public_tests": {"input": [t.input for t in tests], "output": [t.expected for t in tests]},
            "solutions": {"language": [3] * len(solutions), "solution": list(solutions)},
            "incorrect_solutions": {"language": [3] * len(incorrect), "solution": list(incorrect)},
            "time_limit": {"seconds": 0, "nanos": int(limit_s * 1e9)}, "memory_limit_bytes": 256 << 20}


def _rows(out: Path, table: str) -> list[dict]:
    return shards.read_table(out, table, arrow_schema(table)).to_pylist()


def test_accepted_solution_past_the_limit_is_labelled_not_rejected(tmp_path):
    p, slow, fast, tests, t_slow = _range_sums()
    wrong = slow + "print(0)\n"  # the same slow work, then a wrong answer
    src = tmp_path / "train.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in (
        # the slow solution takes 2x this limit (1.5x under the cap of 3x): the slow tail
        _row("within-cap", p, tests, t_slow / 2, [slow, fast, wrong], incorrect=[slow]),
        # 5x this limit: past the cap
        _row("past-cap", p, tests, t_slow / 5, [slow]),
    )))
    out = tmp_path / "out"

    # the rule before: a cap of 1 rejects every program past the limit on this host
    build(str(src), out, BuildSettings(repeats=1, limit_cap=1.0))
    before = {(r["problem_id"], r["solution"]): r for r in _rows(out, "submissions") if r["is_correct"]}
    assert before[("within-cap", slow)]["reject_cause"] == "time"

    # the default cap: the same folder, the rows the cap decided measured again
    summary = build(str(src), out, BuildSettings(repeats=1))
    rows = {(r["problem_id"], r["solution"], r["is_correct"]): r for r in _rows(out, "submissions")}
    tail = rows[("within-cap", slow, True)]
    assert (tail["status"], tail["past_limit"], tail["limit_cap"]) == ("measured", True, 3.0)
    assert tail["previous_cause"] == "time" and tail["remeasured"]
    # labelled slow, never fast: its runtime is its own, past the limit and above its fast twin's
    twin = rows[("within-cap", fast, True)]
    assert (twin["status"], twin["past_limit"]) == ("measured", False) and not twin["remeasured"]
    assert max(tail["test_cpu_times_s"]) > t_slow / 2 and tail["runtime_s"] > 5 * twin["runtime_s"]
    # an incorrect program stays rejected: wrong after running past the limit; labelled incorrect: not run
    assert (rows[("within-cap", wrong, True)]["status"], rows[("within-cap", wrong, True)]["reject_cause"]) == (
        "rejected", "wrong_answer")
    assert rows[("within-cap", slow, False)]["status"] == "not_run"
    # past the cap: a `time` reject that says so, measured a second time first
    capped = rows[("past-cap", slow, True)]
    assert (capped["status"], capped["reject_cause"], capped["past_limit"]) == ("rejected", "time", None)
    reject = next(r for r in _rows(out, "rejects") if r["problem_id"] == "past-cap")
    assert reject["reason"].startswith("failed on time twice") and "past the cap (3 x the" in reject["reason"]

    # counts per language in the summary and the card
    assert summary.slow_tail == {"python3": {"past_limit": 1, "past_cap": 1}} and summary.limit_cap == 3.0
    assert ("slow_tail.python3.past_cap", 1) in flatten(jsonable(summary))  # rows of the Prefect table artifact
    card = (out / "README.md").read_text()
    assert "**Past the time limit**: of the submissions labelled correct, 1 ran longer" in card
    assert "| python3 | 1 | 1 |" in card

    # an unchanged cap measures nothing again
    plan = perf.BuildPlan(out, BuildSettings(repeats=1))
    try:
        assert list(perf_plan.plan_build(str(src), out, plan.settings, plan=plan)) == [] and plan.remeasuring == 0
    finally:
        plan.release()


def _result(clock: str, cpu_times: list[float]) -> RunResult:
    return RunResult(Verdict.OK, "bwrap", Language.CPP, True, CompileInfo(True),
                     tests=[Measured(Verdict.OK, cpu_time_s=c, cpu_times_s=[c]) for c in cpu_times],
                     flags=[f"clock:{clock}"])


def test_past_limit_compares_with_the_limit_the_clock_enforces():
    lim = Limits(time_s=0.5)
    assert perf_batch.past_limit(_result("cpu", [0.1, 0.6]), lim)
    assert not perf_batch.past_limit(_result("cpu", [0.1, 0.5]), lim)
    # under valgrind the limit is scaled for its slowdown: its CPU time is compared with that
    assert not perf_batch.past_limit(_result("instructions", [0.6 + STARTUP_S]), lim)
    assert perf_batch.past_limit(_result("instructions", [0.5 * SLOWDOWN["instructions"] + STARTUP_S + 1]), lim)
