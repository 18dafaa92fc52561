"""The contest protocol's estimate on short programs, against the rounds it is given: records many
interleaved rounds of the controlled task's reference against itself and of its slow control
against the reference (``paired_score`` with every round forced), then cuts them into consecutive
windows of k rounds and scores each window as a score of k rounds would
(``timing_stats.rounds_estimate``): per k, the median and largest |error| against the truth, the
share outside ±10%, and |error| / estimated error (calibrated: median ~0.67, p90 ~1.6 for normal
errors).

    .venv/bin/python benchmarks/contest_rounds_bench.py CONTROLLED_DIR [--rounds 60] [--prompts 3] [--record F.json]
    .venv/bin/python benchmarks/contest_rounds_bench.py --replay F.json

Truth: the reference against itself is 1 by construction; the slow control's is the paired
estimate of all the recorded rounds (its error printed beside it), the dataset's build-time ratio
("known") printed for comparison.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

WINDOWS = (5, 9, 15, 25)


def record(controlled: Path, rounds: int, n_prompts: int, path: str | None) -> dict:
    from perfalign.evaluation.config import EvalConfig
    from perfalign.evaluation.tasks.controlled import ControlledTask
    from perfalign.measure.contest import ContestSettings, paired_score
    from perfalign.sandbox import Job, Sandbox

    prompts, _ = ControlledTask().load(EvalConfig(controlled_dir=str(controlled)))
    every = ContestSettings(repeats=rounds, max_repeats=rounds, max_budget_repeats=rounds)
    out = []
    with Sandbox(backend="auto", workers=1) as sb:
        for p in prompts[:n_prompts]:
            def job(mode: str) -> Job:
                return Job(p.references[mode], p.language, p.spec.tests, p.spec.limits)
            for mode in ("reference", "slow"):
                t0 = time.monotonic()
                score, info = paired_score(sb, [job("reference")], job(mode), every, mode)
                out.append({"prompt": p.prompt_id, "mode": mode, "known": p.expected_speedup.get(mode),
                            "verdict": score.verdict, "baseline": info["baseline_runs"],
                            "candidate": info["runtimes"], "wall_s": round(time.monotonic() - t0, 1)})
                print(f"{p.prompt_id} {mode}: {len(out[-1]['candidate'])} rounds, {out[-1]['wall_s']} s",
                      file=sys.stderr)
                if path:  # after each pair: a long recording cut short keeps what it has
                    Path(path).write_text(json.dumps({"rounds": rounds, "pairs": out}, indent=1))
    return {"rounds": rounds, "pairs": out}


def analyse(rec: dict) -> list[dict]:
    from perfalign.measure.timing_stats import paired_speedup, rounds_estimate

    rows = []
    for r in rec["pairs"]:
        pairs = [(b, c) for b, c in zip(r["baseline"], r["candidate"]) if b and c]
        whole = paired_speedup(pairs)
        truth = 1.0 if r["mode"] == "reference" else whole.speedup
        for k in WINDOWS:
            errs, ratios = [], []
            for i in range(0, len(pairs) - k + 1, k):
                est = rounds_estimate(pairs[i:i + k])
                err = math.log(est.speedup / truth)
                errs.append(err)
                if est.rel_se:
                    ratios.append(abs(err) / est.rel_se)
            if errs:
                rows.append({"prompt": r["prompt"], "mode": r["mode"], "k": k, "windows": len(errs),
                             "truth": round(truth, 3), "truth_se": round(whole.rel_se or 0, 3), "known": r["known"],
                             "median_abs_err": round(statistics.median(abs(e) for e in errs), 3),
                             "max_abs_err": round(max(abs(e) for e in errs), 3),
                             "outside_10pct": sum(abs(math.exp(e) - 1) > 0.10 for e in errs),
                             "err_over_se_median": round(statistics.median(ratios), 2) if ratios else None,
                             "err_over_se_p90": round(sorted(ratios)[int(0.9 * (len(ratios) - 1))], 2)
                             if ratios else None})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("controlled", nargs="?", type=Path, help="a controlled task folder (RUN/controlled)")
    ap.add_argument("--rounds", type=int, default=60, help="rounds recorded per pair")
    ap.add_argument("--prompts", type=int, default=3, help="the first N held-out prompts (the main job's 3)")
    ap.add_argument("--record", help="write the recorded rounds to this file")
    ap.add_argument("--replay", help="analyse rounds recorded before instead of recording")
    a = ap.parse_args()
    if not (a.replay or a.controlled):
        ap.error("give a controlled task folder or --replay FILE")
    rec = json.loads(Path(a.replay).read_text()) if a.replay else record(a.controlled, a.rounds, a.prompts, a.record)
    print("prompt mode k windows truth(±se) known | median|err| max|err| outside10% | |err|/SE median p90")
    for row in analyse(rec):
        print(f"{row['prompt'][:16]:<16} {row['mode']:<9} {row['k']:>2} {row['windows']:>2} "
              f"{row['truth']:.3f}(±{row['truth_se']:.3f}) {row['known'] or 0:.2f} | {row['median_abs_err']:.3f} "
              f"{row['max_abs_err']:.3f} {row['outside_10pct']}/{row['windows']} | {row['err_over_se_median']} "
              f"{row['err_over_se_p90']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
