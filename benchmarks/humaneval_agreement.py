"""Does the HumanEval task's correctness agree with the official tests? Every recorded model sample
(``eval_*_humaneval/samples.jsonl`` under the given folders: the text and the verdict the task gave
it) is run again against HumanEval's own ``check`` in the sandbox (the prompt, the sample's code,
the official test, ``check(entry_point)``), and the two verdicts are crossed.

The task's correctness is the canonical's results on the official calls *and* on drawn performance
inputs, token for token: it may fail a sample the official asserts pass (a valid different root of
HumanEval/32, an answer wrong only on larger inputs), never the reverse unless the official calls
themselves differ. Prints one JSON line per disagreement, then the 2 x 2 table.

    nice -n 5 .venv/bin/python benchmarks/humaneval_agreement.py docs/measurements/confirmatory-qwen05b
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from perfalign.evaluation.records import extract_candidate
from perfalign.evaluation.tasks import humaneval as he
from perfalign.sandbox import Job, Limits, Sandbox, TestCase

WITHHELD = ("NO_RESULT", "NO_CODE")  # not scored by the task, or no code to run


def official(sb: Sandbox, pid: str, code: str) -> bool:
    """Whether ``code`` passes HumanEval's own test of ``pid`` (its asserts), run in the sandbox."""
    p = he.problem(pid)
    src = f"{p.prompt}\n{code}\n{p.test}\ncheck({p.entry_point})\nprint('PASSED')\n"
    r = sb.run_job_retrying(Job(src, "python3", [TestCase("", None)], Limits(time_s=10, memory_mb=512),
                                keep_output=True))
    return r.ok and (r.tests[0].output or "").strip().endswith("PASSED")


def main(roots: list[str]) -> None:
    files = sorted(f for root in roots for f in Path(root).glob("**/eval_*_humaneval/samples.jsonl"))
    table: Counter = Counter()
    with Sandbox(backend="auto", workers=2) as sb:
        for f in files:
            for line in f.read_text().splitlines():
                r = json.loads(line)
                if r["verdict"] in WITHHELD:
                    table["withheld", r["verdict"]] += 1
                    continue
                code, _, _ = extract_candidate(r["text"])
                passed = official(sb, r["problem_id"], code)
                table[("task correct" if r["correct"] else "task incorrect"),
                      ("official pass" if passed else "official fail")] += 1
                if passed != bool(r["correct"]):
                    print(json.dumps({"file": str(f), "problem": r["problem_id"], "sample": r["sample"],
                                      "task": r["verdict"], "official": passed}), flush=True)
    print(json.dumps({"files": len(files), "table": {" / ".join(k): n for k, n in sorted(table.items())}}))


if __name__ == "__main__":
    main(sys.argv[1:] or ["docs/measurements/confirmatory-qwen05b"])
