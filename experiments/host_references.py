"""The idiom task's reference programs measured on this host, beside the recorded ones (docs/alignment.md,
"Seed 8 on another host"), and a seed's idiom rows relabelled against them.

The confirmatory task keeps the CPU seconds its references took on the host that built it
(``controlled_task.json``): a sample's fast threshold and speedup baseline. A sample evaluated on another
CPU is measured there, so its label depends on the two hosts' relative speed. ``measure`` writes this
host's figures for the same programs; ``relabel`` judges rows against them (each row's recorded CPU time
and correctness, nothing run again), the sensitivity reading S1.

    python experiments/host_references.py --records docs/measurements/confirmatory-qwen05b --out FILE
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import time
from pathlib import Path


def threshold_s(runtimes: dict[str, float]) -> float:
    """``ControlledDataset.threshold_s`` of one instance's reference runtimes."""
    a, b = sorted(runtimes.values())[:2]
    return math.sqrt(a * b)


def relabel(rows: list[dict], runtimes: dict[str, dict[str, float]]) -> list[dict]:
    """The rows with ``label`` and ``threshold_s`` judged against ``runtimes`` (problem id -> kind -> CPU s):
    a correct row is fast below the new threshold; other labels are kept."""
    out = []
    for r in rows:
        r = dict(r)
        if r["label"] in ("fast_correct", "slow_correct"):
            r["threshold_s"] = threshold_s(runtimes[r["problem_id"]])
            r["label"] = "fast_correct" if r["cpu_time_s"] < r["threshold_s"] else "slow_correct"
        out.append(r)
    return out


def ratios(here: dict[str, dict[str, float]], recorded: dict[str, dict[str, float]], ids: list[str]) -> dict:
    """Median (and quartiles) of here / recorded: per program, and of the thresholds of ``ids``."""
    per = [here[p][k] / recorded[p][k] for p in here for k in here[p]]
    thr = [threshold_s(here[p]) / threshold_s(recorded[p]) for p in ids]
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
    ap.add_argument("--records", type=Path, required=True, help="the confirmatory records (holds task/)")
    ap.add_argument("--out", type=Path, required=True, help="JSON file for this host's figures")
    ap.add_argument("--conditions", default="", help="what else ran meanwhile, kept in the file")
    args = ap.parse_args(argv)
    out = {**measure(args.records), "conditions": args.conditions}
    args.out.write_text(json.dumps(out, indent=1))
    rec = json.loads((args.records / "task" / "controlled_task.json").read_text())
    print(f"{args.out}: {len(out['runtimes'])} instances in {out['seconds']} s on {out['cpu_model']}; "
          f"here / recorded (quartiles): {ratios(out['runtimes'], rec['runtimes'], rec['heldout'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
