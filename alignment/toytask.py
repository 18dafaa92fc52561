"""A small task on which alignment must visibly move a model: Python problems that each have a
fast (closed-form) and a slow (loop) correct program. SFT on a 50/50 mix makes the tiny model
write both; DPA and RLPF should raise the share of fast-and-correct samples, which we measure
by sampling and running every sample in the sandbox (correct? CPU time under a threshold?).

The task is written in the real stage-input formats (a CodeContests-Perf folder with problems
and measured submissions; sft_prompts and triplets tables), so the proof runs the same stage
functions as production. Train and eval prompts are the same six prompts: the claim is about
the distribution the model produces for them, not generalisation.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from perfdata.triplets import SFT_SCHEMA, TRIPLET_SCHEMA

from .equations import adaptive_margin
from .prompts import extract_code, format_response, instruction_prompt

LANG = "python3"
TEST_NS = (7, 1_500_000)


@dataclass(frozen=True)
class ToyProblem:
    problem_id: str
    statement: str
    fast: str
    slow: str
    wrong: str  # an incorrect submission (the dataset's 5 % incorrect d_s)

    def expected_output(self, n: int) -> str:
        """Run the (trusted, instant) closed-form program in-process for the expected output."""
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(self.fast, {"input": lambda: str(n)})
        return buf.getvalue()


def _p(pid: str, statement: str, fast: str, slow: str, wrong: str) -> ToyProblem:
    head = "n = int(input())\n"
    return ToyProblem(pid, statement, head + fast, head + slow, head + wrong)


PROBLEMS: tuple[ToyProblem, ...] = (
    _p("toy_sum", "Read an integer n and print the sum 1 + 2 + ... + n.",
       "print(n * (n + 1) // 2)",
       "s = 0\nfor i in range(1, n + 1):\n    s += i\nprint(s)",
       "print(n * (n - 1) // 2)"),
    _p("toy_squares", "Read an integer n and print the sum of the squares of 1, 2, ..., n.",
       "print(n * (n + 1) * (2 * n + 1) // 6)",
       "s = 0\nfor i in range(1, n + 1):\n    s += i * i\nprint(s)",
       "print(n * n)"),
    _p("toy_cubes", "Read an integer n and print the sum of the cubes of 1, 2, ..., n.",
       "print((n * (n + 1) // 2) ** 2)",
       "s = 0\nfor i in range(1, n + 1):\n    s += i * i * i\nprint(s)",
       "print(n * n * n)"),
    _p("toy_multiples", "Read an integer n and print how many of the numbers 1, 2, ..., n are divisible by 3.",
       "print(n // 3)",
       "c = 0\nfor i in range(1, n + 1):\n    if i % 3 == 0:\n        c += 1\nprint(c)",
       "print(n // 3 + 1)"),
    _p("toy_evens", "Read an integer n and print the sum of the even numbers between 1 and n.",
       "m = n // 2\nprint(m * (m + 1))",
       "s = 0\nfor i in range(1, n + 1):\n    if i % 2 == 0:\n        s += i\nprint(s)",
       "print(n * n // 4)"),
    _p("toy_odds", "Read an integer n and print the sum of the odd numbers between 1 and n.",
       "m = (n + 1) // 2\nprint(m * m)",
       "s = 0\nfor i in range(1, n + 1):\n    if i % 2 == 1:\n        s += i\nprint(s)",
       "print(n * n // 2)"),
)


@dataclass
class ToyTask:
    root: Path
    codecontests_dir: Path
    data_dir: Path                     # sft_prompts + triplets tables
    threshold_s: float                 # CPU time (mean over tests) below which a correct sample is "fast"
    reference_runtimes: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def prompts(self) -> dict[str, str]:
        return {p.problem_id: instruction_prompt(p.statement, LANG) for p in PROBLEMS}


def _tests(p: ToyProblem) -> tuple[list[str], list[str]]:
    return [f"{n}\n" for n in TEST_NS], [p.expected_output(n) for n in TEST_NS]


def _write(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def build_toy_task(root: str | Path, sandbox=None, copies: int = 8, repeats: int = 3) -> ToyTask:
    """Measure the reference programs in the sandbox and write the task's tables under ``root``."""
    from sandbox import Job, Limits, Sandbox, TestCase

    root = Path(root)
    sb = sandbox or Sandbox(backend="auto", workers=2)
    jobs, keys = [], []
    for p in PROBLEMS:
        ins, outs = _tests(p)
        for kind in ("fast", "slow"):
            jobs.append(Job(getattr(p, kind), LANG, [TestCase(i, o) for i, o in zip(ins, outs)], Limits(time_s=5.0),
                            repeats=repeats))
            keys.append((p.problem_id, kind))
    runtimes: dict[str, dict[str, float]] = {p.problem_id: {} for p in PROBLEMS}
    for i, res in sb.run_many(jobs, workers=2):
        if not res.ok:
            raise RuntimeError(f"toy reference {keys[i]} failed in the sandbox: {res.verdict} {res.message}")
        runtimes[keys[i][0]][keys[i][1]] = res.mean_cpu_time_s
    # Fast/slow boundary: geometric mean of the slowest fast and the fastest slow reference.
    slowest_fast = max(r["fast"] for r in runtimes.values())
    fastest_slow = min(r["slow"] for r in runtimes.values())
    if not fastest_slow > 2 * slowest_fast:
        raise RuntimeError(f"toy programs do not separate: fast up to {slowest_fast:.4f}s, slow from {fastest_slow:.4f}s")
    threshold = math.sqrt(slowest_fast * fastest_slow)

    cc = root / "codecontests"
    problems, subs, sft, triplets = [], [], [], []
    for p in PROBLEMS:
        ins, outs = _tests(p)
        problems.append(dict(problem_id=p.problem_id, name=p.problem_id, description=p.statement, split="train",
                             held_out=False, time_limit_s=5.0, memory_limit_mb=256, test_inputs=ins, test_outputs=outs))
        rt = runtimes[p.problem_id]
        for kind in ("fast", "slow"):
            subs.append(dict(submission_id=f"{p.problem_id}-{kind}", problem_id=p.problem_id, language=LANG,
                             solution=getattr(p, kind), is_correct=True, runtime_s=rt[kind], verdict="OK",
                             status="measured"))
        subs.append(dict(submission_id=f"{p.problem_id}-wrong", problem_id=p.problem_id, language=LANG, solution=p.wrong,
                         is_correct=False, runtime_s=None, verdict="", status="not_run"))
        prompt = instruction_prompt(p.statement, LANG)
        for c in range(copies):  # the 50/50 SFT mix
            for kind in ("fast", "slow"):
                sft.append(dict(sample_id=f"{p.problem_id}/{kind}/{c}", unit_id=p.problem_id, problem_id=p.problem_id,
                                source="contest", language=LANG, kind="instruction", prompt=prompt,
                                completion=format_response(getattr(p, kind), LANG), split="train"))
        for kind in ("fast", "slow"):  # eval = the same prompts (see module docstring)
            sft.append(dict(sample_id=f"{p.problem_id}/{kind}/eval", unit_id=p.problem_id, problem_id=p.problem_id,
                            source="contest", language=LANG, kind="instruction", prompt=prompt,
                            completion=format_response(getattr(p, kind), LANG), split="eval"))
        base = dict(unit_id=p.problem_id, problem_id=p.problem_id, source="contest", language=LANG, problem=p.statement,
                    prompt=prompt, fast=p.fast, fast_id=f"{p.problem_id}-fast",
                    fast_runtime_s=rt["fast"], median_runtime_s=median([rt["fast"], rt["slow"]]))
        for split in ("reward_train", "rl_train", "reward_eval", "rl_eval"):
            for slow_kind in ("slow", "wrong"):
                correct = slow_kind == "slow"
                triplets.append(dict(base, triplet_id=f"{p.problem_id}/{split}/{slow_kind}",
                                     slow=getattr(p, slow_kind), slow_id=f"{p.problem_id}-{slow_kind}",
                                     slow_runtime_s=rt["slow"] if correct else None, slow_is_correct=correct,
                                     speedup=rt["slow"] / rt["fast"] if correct else None,
                                     margin=adaptive_margin(rt["fast"], rt["slow"] if correct else None, is_contest=True,
                                                            slow_is_correct=correct), split=split))
    _write(cc / "data" / "problems-00000-of-00001.parquet", problems)
    _write(cc / "data" / "submissions-00000-of-00001.parquet", subs)
    data = root / "triplets"
    _write(data / "data" / "sft_prompts-00000-of-00001.parquet", sft, SFT_SCHEMA)
    _write(data / "data" / "triplets-00000-of-00001.parquet", triplets, TRIPLET_SCHEMA)
    task = ToyTask(root, cc, data, threshold, runtimes)
    (root / "toytask.json").write_text(json.dumps({"threshold_s": threshold, "reference_runtimes": runtimes}, indent=2))
    return task


@dataclass
class ShareReport:
    samples: int
    fast_correct: int
    slow_correct: int
    incorrect: int
    distinct_programs: int
    per_problem: dict[str, dict[str, int]]

    @property
    def fast_share(self) -> float:
        return self.fast_correct / self.samples if self.samples else 0.0

    @property
    def correct_share(self) -> float:
        return (self.fast_correct + self.slow_correct) / self.samples if self.samples else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "fast_correct_share": round(self.fast_share, 4),
                "correct_share": round(self.correct_share, 4)}


def classify_samples(task: ToyTask, samples: dict[str, list[str]], sandbox=None) -> ShareReport:
    """Run every sample (deduplicated by code) on its problem's tests: incorrect, or correct and
    fast / slow by its mean CPU time against the task threshold."""
    from sandbox import Job, Limits, Sandbox, TestCase

    sb = sandbox or Sandbox(backend="auto", workers=2)
    by_id = {p.problem_id: p for p in PROBLEMS}
    codes: dict[tuple[str, str], int] = {}
    jobs = []
    for pid, texts in samples.items():
        ins, outs = _tests(by_id[pid])
        for t in texts:
            code, _ = extract_code(t)
            if code is not None and (pid, code) not in codes:
                codes[(pid, code)] = len(jobs)
                jobs.append(Job(code, LANG, [TestCase(i, o) for i, o in zip(ins, outs)], Limits(time_s=5.0),
                                stop_on_failure=True))
    results = dict(sb.run_many(jobs, workers=2))
    per: dict[str, Counter] = {}
    for pid, texts in samples.items():
        c = per.setdefault(pid, Counter())
        for t in texts:
            code, _ = extract_code(t)
            res = results.get(codes.get((pid, code), -1)) if code is not None else None
            if res is None or not res.ok:
                c["incorrect"] += 1
            elif res.mean_cpu_time_s < task.threshold_s:
                c["fast_correct"] += 1
            else:
                c["slow_correct"] += 1
    total = sum(per.values(), Counter())
    return ShareReport(sum(len(v) for v in samples.values()), total["fast_correct"], total["slow_correct"],
                       total["incorrect"], len(jobs), {k: dict(v) for k, v in per.items()})


def sample_and_classify(task: ToyTask, model_dir: str | Path, samples_per_prompt: int, seed: int = 0,
                        temperature: float = 1.0, max_new_tokens: int = 96, sandbox=None) -> ShareReport:
    """Sample the model on the task prompts (top-k 0, top-p 1 as in RLPF) and classify."""
    from .models import load_causal_lm, load_tokenizer
    from .scoring import sample_completions

    tok, model = load_tokenizer(str(model_dir)), load_causal_lm(str(model_dir))
    ids, prompts = list(task.prompts), list(task.prompts.values())
    outs = sample_completions(model, tok, prompts, max_new_tokens=max_new_tokens, temperature=temperature,
                              num_samples=samples_per_prompt, seed=seed)
    return classify_samples(task, dict(zip(ids, outs)), sandbox)


def summarize_runtimes(task: ToyTask) -> dict[str, float]:
    fast = [r["fast"] for r in task.reference_runtimes.values()]
    slow = [r["slow"] for r in task.reference_runtimes.values()]
    return {"fast_median_s": statistics.median(fast), "slow_median_s": statistics.median(slow),
            "threshold_s": task.threshold_s}
