"""What resumable training costs: SFT on a model with a checkpoint after every step (the worst
case) and with none, side by side in one process; prints the seconds per checkpoint, its size,
the step time, and the share of training time a checkpoint costs at the default interval
(``StageConfig.checkpoint_every_s``).

    nice -n 5 .venv/bin/python benchmarks/checkpoint_cost.py --models embedded,smollm2-135m --steps 4
    nice -n 5 .venv/bin/python benchmarks/checkpoint_cost.py --profile small --models smollm2-135m --steps 4
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(model: str, data_dir: str, steps: int, work: Path, profile: str) -> dict:
    from perfalign.alignment import sft, stage_config
    from perfalign.alignment.models import resolve_model
    from perfalign.config.tables import preset

    base = preset("sft", profile, model_name_or_path=resolve_model(model), data_path=data_dir, max_steps=steps,
                  eval_before=False, max_eval_samples=4)
    sizes = []
    drop = stage_config.drop_checkpoints

    def measure_then_drop(cfg):  # the size of the last checkpoint before the finished run drops it
        sizes.extend(_size(p) for p in (Path(cfg.output_dir) / stage_config.TRAINER_DIR).glob("checkpoint-*"))
        drop(cfg)

    stage_config.drop_checkpoints = measure_then_drop
    try:
        runs = {}
        for name, every in (("none", 0.0), ("every step", 1e-6)):
            cfg = dataclasses.replace(base, output_dir=str(work / f"{model}-{name}"), checkpoint_every_s=every)
            m = sft.run_sft(cfg).metrics
            runs[name] = {"runtime_s": m["runtime_s"], "median_step_s": m["step_seconds"]["median_s"],
                          "checkpointing": m["checkpointing"]}
    finally:
        stage_config.drop_checkpoints = drop
    ck = runs["every step"]["checkpointing"]
    per = ck["seconds"] / ck["checkpoints"]
    interval = preset("sft", profile).checkpoint_every_s
    return {"model": model, "profile": profile, "lora_r": base.lora_r, "steps": steps, "runs": runs,
            "seconds_per_checkpoint": round(per, 3),
            "checkpoint_mb": round(statistics.median(sizes) / 2**20, 1) if sizes else None,
            "default_interval_s": interval, "share_at_default_interval": round(per / (interval + per), 4),
            # a step's interval includes the checkpoint taken after it (the runtimes include loading)
            "median_step_ratio_every_step_vs_none": round(runs["every step"]["median_step_s"]
                                                          / runs["none"]["median_step_s"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="embedded,smollm2-135m", help="Comma-separated model names or paths.")
    ap.add_argument("--steps", type=int, default=4, help="Training steps per run.")
    ap.add_argument("--profile", default="embedded", help="The profile whose [sft] settings are used.")
    args = ap.parse_args()
    from perfalign.perfdata.controlled import build_controlled_task, quick_instances

    with tempfile.TemporaryDirectory() as tmp:
        train, held = quick_instances()
        task = build_controlled_task(Path(tmp) / "task", copies=2, repeats=1, train=train, heldout=held)
        for model in args.models.split(","):
            result = measure(model, str(task.data_dir), args.steps, Path(tmp), args.profile)
            print(json.dumps(result, indent=1), flush=True)


if __name__ == "__main__":
    main()
