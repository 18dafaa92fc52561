"""The idiom task's reference programs measured on this host, beside the recorded ones (docs/alignment.md,
"Seed 8 on another host"), and a seed's idiom rows relabelled against them.

The confirmatory task keeps the CPU seconds its references took on the host that built it
(``controlled_task.json``): a sample's fast threshold and speedup baseline. A sample evaluated on another
CPU is measured there, so its label depends on the two hosts' relative speed. ``measure`` writes this
host's figures for the same programs; ``relabel`` judges rows against them (each row's recorded CPU time
and correctness, nothing run again), and ``relabelled_records`` writes a copy of the records whose seed's
idiom shares are recomputed so: the sensitivity reading S1, read by the same ``--report-only``.

    python experiments/host_references.py measure --records docs/measurements/confirmatory-qwen05b --out FILE
    python experiments/host_references.py relabel --records docs/measurements/confirmatory-qwen05b --seed 8 \
        --references FILE --out DIR      # then: alignment_proof.py ... --workdir DIR --report-only
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

IDIOM_SPLITS = ("heldout", "train")  # a result's idiom-task shares (HumanEval's speedups need no host figure)


def relabel(rows: list[dict], runtimes: dict[str, dict[str, float]]) -> list[dict]:
    """The rows with ``label`` and ``threshold_s`` judged against ``runtimes`` (problem id -> kind -> CPU s):
    a correct row is fast below the new threshold; other labels are kept."""
    from arms import CORRECT

    from perfalign.perfdata.controlled import fast_threshold_s

    out = []
    for r in rows:
        r = dict(r)
        if r["label"] in CORRECT:
            r["threshold_s"] = fast_threshold_s(runtimes[r["problem_id"]])
            r["label"] = "fast_correct" if r["cpu_time_s"] < r["threshold_s"] else "slow_correct"
        out.append(r)
    return out


def relabelled_records(records: Path, seed: int, references: Path, out: Path) -> dict:
    """A copy of ``records`` at ``out`` in which seed ``seed``'s ``result.json`` has each model's idiom
    shares recomputed from its recorded rows judged against ``references`` (marked ``relabelled``);
    the sample files stay as recorded. The shares replaced, model -> split -> (before, after) fast &
    correct share."""
    from arms import rows_report

    from perfalign.alignment.proof import read_samples
    from perfalign.perfdata.controlled import reference_baseline_s

    runtimes = json.loads(references.read_text())["runtimes"]
    shutil.copytree(records, out)
    path = out / f"seed{seed}" / "result.json"
    result = json.loads(path.read_text())
    changed: dict = {}
    for model, splits in result["samples"].items():
        for split in (s for s in IDIOM_SPLITS if s in splits):
            rows = read_samples(out / f"seed{seed}" / f"eval_{model}_{split}" / "samples.jsonl")
            if len(rows) != splits[split]["samples"]:
                raise SystemExit(f"seed {seed} {model} {split}: {len(rows)} rows recorded, the result counts "
                                 f"{splits[split]['samples']}")
            task = SimpleNamespace(baseline_s=lambda pid: reference_baseline_s(runtimes[pid]))  # rows_report's view
            new = rows_report(task, relabel(rows, runtimes))
            changed.setdefault(model, {})[split] = (splits[split]["fast_correct_share"], new["fast_correct_share"])
            splits[split] = new
    result["relabelled"] = {"references": str(references), "splits": list(IDIOM_SPLITS)}
    path.write_text(json.dumps(result))
    return changed


def ratios(here: dict[str, dict[str, float]], recorded: dict[str, dict[str, float]], ids: list[str]) -> dict:
    """Median (and quartiles) of here / recorded: per program, and of the thresholds of ``ids``."""
    from perfalign.perfdata.controlled import fast_threshold_s

    per = [here[p][k] / recorded[p][k] for p in here for k in here[p]]
    thr = [fast_threshold_s(here[p]) / fast_threshold_s(recorded[p]) for p in ids]
    q = lambda xs: [round(x, 3) for x in statistics.quantiles(xs, n=4)]  # noqa: E731
    return {"program": q(per), "heldout_threshold": q(thr)}


def measure(records: Path) -> dict:
    """This host's CPU seconds for every reference program of the recorded task, and its calibration."""
    from perfalign.perfdata.controlled import _default_sandbox, all_instances, measure_references
    from perfalign.sandbox.calibration import cpu_model

    rec = json.loads((records / "task" / "controlled_task.json").read_text())
    train, held = all_instances(rec["family_set"])
    ids = set(rec["train"]) | set(rec["heldout"])
    sb, t = _default_sandbox(), time.time()
    runtimes = measure_references([i for i in train + held if i.problem_id in ids], sb)
    return {"measured": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "runtimes": runtimes,
            "calibration": sb.calibration(), "seconds": round(time.time() - t, 1), "cpu_model": cpu_model()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="this host's CPU seconds for the recorded task's references")
    m.add_argument("--records", type=Path, required=True, help="the confirmatory records (holds task/)")
    m.add_argument("--out", type=Path, required=True, help="JSON file for this host's figures")
    m.add_argument("--conditions", default="", help="what else ran meanwhile, kept in the file")
    r = sub.add_parser("relabel", help="a copy of the records with one seed's idiom shares judged against a "
                                       "references file")
    r.add_argument("--records", type=Path, required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--references", type=Path, required=True, help="a file `measure` wrote")
    r.add_argument("--out", type=Path, required=True, help="a new folder (the copy)")
    args = ap.parse_args(argv)
    if args.command == "relabel":
        if args.out.exists():
            raise SystemExit(f"{args.out} exists: give a new folder")
        for model, splits in relabelled_records(args.records, args.seed, args.references, args.out).items():
            for split, (before, after) in splits.items():
                print(f"seed {args.seed} {model} {split}: fast & correct {before} -> {after}")
        return 0
    out = {**measure(args.records), "conditions": args.conditions}
    args.out.write_text(json.dumps(out, indent=1))
    rec = json.loads((args.records / "task" / "controlled_task.json").read_text())
    print(f"{args.out}: {len(out['runtimes'])} instances in {out['seconds']} s on {out['cpu_model']}; "
          f"here / recorded (quartiles): {ratios(out['runtimes'], rec['runtimes'], rec['heldout'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
