"""Evaluate models on the bundled tasks and print the results (pass@1, speedup_n@1 per task),
the fine-tuning metrics and the timings; the report, figures and raw samples go to --out.

    # the base / SFT / RLPF / DPA models of an alignment run, plus the oracle checks
    .venv/bin/python benchmarks/eval_embedded.py --run-dir runs/align --ccperf /tmp/ccp --oracles
    # any models (LABEL=REF: Hub name, model directory, embedded, oracle:reference|slow|fast)
    .venv/bin/python benchmarks/eval_embedded.py --model base=embedded --ccperf /tmp/ccp

Without --ccperf the contest task is built first from the bundled sample's test split (about a
minute). The embedded profile (2 samples, 4 prompts per task) is the default; --profile
production uses the paper's settings (20 samples, all prompts, 8 OpenMP threads).
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from perfalign.evaluation import EvalConfig, ModelSpec, evaluate, models_from_run_dir  # noqa: E402
from perfalign.evaluation.tasks.registry import TASK_LABELS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run-dir", help="alignment run directory (sft/, rlpf/, dpa/ ...)")
    ap.add_argument("--model", action="append", default=[], help="LABEL=REF (repeatable)")
    ap.add_argument("--oracles", action="store_true", help="also evaluate the oracle pseudo-models")
    ap.add_argument("--ccperf", help="CodeContests-Perf folder (default: build one from the bundled sample)")
    ap.add_argument("--out", default="runs/eval_embedded")
    ap.add_argument("--profile", choices=("embedded", "production"), default="embedded")
    ap.add_argument("--max-prompts", type=int, default=None, help="prompts per task (profile default)")
    ap.add_argument("--samples", type=int, default=None, help="samples per prompt (profile default)")
    ap.add_argument("--omp-threads", type=int, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    models = models_from_run_dir(args.run_dir) if args.run_dir else []
    models += [ModelSpec.parse(m) for m in args.model]
    if args.oracles:
        models += [ModelSpec(f"oracle-{m}", f"oracle:{m}") for m in ("reference", "slow", "fast")]
    if not models:
        ap.error("give --run-dir, --model or --oracles")
    t0 = time.time()
    ccperf = args.ccperf
    if ccperf is None:
        from perfalign.perfdata.perf import BuildSettings
        from perfalign.perfdata.perf_build import build

        ccperf = str(Path(args.out) / "codecontests_perf")
        build("data/codecontests_sample/data/test-00000-of-00001.parquet", Path(ccperf), BuildSettings(repeats=3),
              workers=2)
        print(f"built {ccperf} in {time.time() - t0:.1f} s")
    overrides = {k: v for k, v in (("max_prompts_per_task", args.max_prompts), ("num_samples", args.samples),
                                   ("omp_threads", args.omp_threads)) if v is not None}
    make = EvalConfig.embedded if args.profile == "embedded" else EvalConfig.production
    report = evaluate(make(models=models, codecontests_dir=ccperf, **overrides), args.out)

    print(f"\n{'model':<14} {'task':<16} {'clock':<5} {'prompts':>7} {'pass@1':>7} {'speedup_n@1':>12}  verdicts")
    for s in report.scores:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(s.verdicts.items()))
        print(f"{s.model:<14} {TASK_LABELS[s.task]:<16} {s.timing:<5} {s.prompts:>7} {s.pass_at['1']:>7.3f} "
              f"{s.speedup_at['1']:>12.3f}  {verdicts}")
    for m in report.models:
        if m["finetune"]:
            values = ", ".join(f"{k}={v}" for k, v in m["finetune"].items() if k != "run_dir")
            print(f"fine-tuning {m['label']}: {values}")
    for s in report.skipped:
        if "max_prompts" not in s["reason"]:
            print(f"skipped {s['task']}/{s['prompt_id']}: {s['reason']}")
    print(f"timings: {report.timings}; sandbox {report.sandbox['backend']}")
    print(f"report: {Path(args.out) / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
