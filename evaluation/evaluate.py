"""evaluate(config, out_dir): generate with every model, execute everything in the sandbox, score,
and write the report. Files in ``out_dir``: generations/<model>.jsonl (raw responses),
samples.jsonl (one line per sample: verdict, runtime, baseline, speedup), report.json,
report.md and the figures."""
from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import platform
import re
import time
from pathlib import Path

from sandbox.calibration import cpu_model

from .config import EvalConfig
from .contests import rescale_baselines
from .execution import execute
from .generation import make_generator
from .report import EvalReport, write_report
from .scoring import oracle_checks, score
from .stages import finetune_metrics
from .tasks import load_tasks

log = logging.getLogger("perfalign.evaluation")


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "model"


def evaluate(config: EvalConfig, out_dir: str | Path, write: bool = True) -> EvalReport:
    """Run the whole evaluation; returns the report (also written to ``out_dir`` when ``write``)."""
    from sandbox import Sandbox

    config.validate()
    t0 = time.time()
    out = Path(out_dir)
    (out / "generations").mkdir(parents=True, exist_ok=True)
    prompts, skipped = load_tasks(config)
    timings = {"load_tasks_s": time.time() - t0}
    log.info("%d prompts (%d skipped)", len(prompts), len(skipped))

    generations: dict[str, list[list[str]]] = {}
    models = []
    for spec in config.models:
        t = time.time()
        responses = make_generator(spec, config).generate(prompts, config.num_samples)
        seconds = time.time() - t
        generations[spec.label] = responses
        with open(out / "generations" / f"{_slug(spec.label)}.jsonl", "w") as f:
            for p, rs in zip(prompts, responses):
                row = {"task": p.task, "prompt_id": p.prompt_id, "prompt": p.text, "responses": rs}
                f.write(json.dumps(row) + "\n")
        models.append({"label": spec.label, "ref": spec.ref, "kind": "oracle" if spec.is_oracle else "hf",
                       "finetune": {} if spec.is_oracle else finetune_metrics(spec.ref), "generation_s": seconds})
        timings[f"generate[{spec.label}]_s"] = seconds
        log.info("generated %s in %.1f s", spec.label, seconds)

    t = time.time()
    load_before = os.getloadavg()[0]  # other tenants' load skews wall times (OpenMP): recorded
    with Sandbox(backend=config.backend, workers=config.workers) as sb:
        calibration = sb.calibration()
        rescaled = rescale_baselines(prompts, calibration)
        samples, baselines = execute(prompts, generations, sb, config.workers, config.accept_unfenced,
                                     config.baseline_runs)
        sandbox_info = {"backend": sb.name, "isolated": sb.isolated, "calibration": calibration,
                        "contest_baseline_rescaling": rescaled}
    timings["execute_s"] = time.time() - t
    load_after = os.getloadavg()[0]
    with open(out / "samples.jsonl", "w") as f:
        for s in samples:
            f.write(json.dumps(s.to_dict()) + "\n")

    scores, excluded = score(prompts, samples, baselines, tuple(config.ks))
    oracles = {m.label: m.oracle_mode for m in config.models if m.is_oracle}
    timings["total_s"] = time.time() - t0
    report = EvalReport(
        created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        host={"node": platform.node(), "cpu": cpu_model(), "cores": os.cpu_count(),
              "loadavg_1m": [round(load_before, 2), round(load_after, 2)]},
        sandbox=sandbox_info, config=config.to_dict(), models=models, scores=scores,
        skipped=[vars(s) for s in skipped], excluded=excluded,
        baselines=[vars(b) for b in baselines.values()],
        oracle_checks=oracle_checks(prompts, samples, oracles),
        timings={k: round(v, 2) for k, v in timings.items()})
    if write:
        write_report(report, out)
    return report
