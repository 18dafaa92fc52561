"""The HumanEval task's controls on given problems, each scored as `perfalign eval score --suite
humaneval` scores (one session per candidate, its own draw and calibration): the canonical solution
(~1), a rewrite that calls it three times (the same results, three times the function's work:
below 1, by how much depends on the function's share of the process), and a wrong answer
(incorrect). Prints one JSON line per (problem, control).

    nice -n 5 .venv/bin/python benchmarks/humaneval_controls.py HumanEval/36 HumanEval/10 HumanEval/0
"""
from __future__ import annotations

import json
import sys
import time

from perfalign.evaluation.score_one import score_candidate
from perfalign.evaluation.tasks import humaneval as he
from perfalign.sandbox import Sandbox


def controls(p: he.HumanEvalProblem) -> dict[str, str]:
    canon = p.prompt + p.canonical_solution
    f = p.entry_point
    return {"canonical": canon,
            "slow3x": canon + f"\n_orig = {f}\ndef {f}(*a):\n    _orig(*a)\n    _orig(*a)\n    return _orig(*a)\n",
            "wrong": canon + f"\n_orig = {f}\ndef {f}(*a):\n    r = _orig(*a)\n    return None if r else 1\n"}


def main(problems: list[str]) -> None:
    with Sandbox(backend="auto", workers=1) as sb:
        for pid in problems:
            for name, code in controls(he.problem(pid)).items():
                t = time.time()
                s, info = score_candidate("humaneval", pid, code, sandbox=sb, repeats=3)
                print(json.dumps({"problem": pid, "control": name, **s.contract(),
                                  **{k: info[k] for k in ("scale", "perf_calls", "function_share")},
                                  "wall_s": round(time.time() - t, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["HumanEval/36"])
