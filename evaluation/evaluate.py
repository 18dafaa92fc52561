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

from perfalign.common.progress import report as report_progress
from perfalign.sandbox import Sandbox, SandboxSettings
from perfalign.sandbox.calibration import cpu_model

from .config import EvalConfig, ModelSpec
from .generation import cached_generations, generation_key, make_generator, store_generations
from .records import BaselineResult, EvalPrompt, EvalReport, Responses, SampleResult, ScoreRun
from .report import write_report
from .run_models import finetune_metrics
from .task_scores import oracle_checks, task_scores
from .tasks.registry import TASKS, load_tasks, task_of

log = logging.getLogger("perfalign.evaluation")


# Every report scores these beside the models: a reader sees the harness measure ~1.0 for the
# reference and less for a known-slow program even when every model scores 0.
CONTROLS = {"control:reference": "oracle:reference", "control:slow": "oracle:slow"}


def with_controls(config: EvalConfig) -> EvalConfig:
    """The config with the two controls appended (unless disabled or already there)."""
    import dataclasses

    if not config.controls:
        return config
    labels = {m.label for m in config.models}
    extra = [ModelSpec(label, ref) for label, ref in CONTROLS.items() if label not in labels]
    return dataclasses.replace(config, models=[*config.models, *extra])


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "model"


def evaluate(config: EvalConfig, out_dir: str | Path, write: bool = True,
             sandbox: SandboxSettings = SandboxSettings()) -> EvalReport:
    """Run the whole evaluation; returns the report (also written to ``out_dir`` when ``write``).
    Serial programs run on ``sandbox.worker_count()`` slots (threaded ones alone)."""
    config.validate()
    config = with_controls(config)
    t0 = time.time()
    out = Path(out_dir)
    (out / "generations").mkdir(parents=True, exist_ok=True)
    prompts, skipped = load_tasks(config)
    timings = {"load_tasks_s": time.time() - t0}
    log.info("%d prompts (%d skipped)", len(prompts), len(skipped))

    finished: dict[str, tuple[list[list[str]], float]] = {}
    report_progress("evaluate: models generated", 0, len(config.models))
    for spec, (responses, seconds) in _generate_all(config, prompts):  # as each finishes
        finished[spec.label] = responses, seconds
        rows = [{"task": p.task, "prompt_id": p.prompt_id, "prompt": p.text, "responses": rs}
                for p, rs in zip(prompts, responses)]
        (out / "generations" / f"{_slug(spec.label)}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        log.info("generated %s in %.1f s", spec.label, seconds)
        report_progress("evaluate: models generated", len(finished), len(config.models))
    generations = {spec.label: finished[spec.label][0] for spec in config.models}  # in the configured order
    timings.update({f"generate[{spec.label}]_s": finished[spec.label][1] for spec in config.models})
    models = [{"label": spec.label, "ref": spec.ref,
               "kind": "control" if spec.label in CONTROLS else "oracle" if spec.is_oracle else "hf",
               "finetune": {} if spec.is_oracle else finetune_metrics(spec.ref),
               "generation_s": finished[spec.label][1]} for spec in config.models]

    t = time.time()
    load_before = os.getloadavg()[0]  # other tenants' load skews wall times (OpenMP): recorded
    with Sandbox.from_settings(sandbox) as sb:
        sandbox_info = {"backend": sb.name, "isolated": sb.isolated, "calibration": sb.calibration()}
        samples, baselines = score_tasks(prompts, generations, ScoreRun(sb, config), sandbox_info)
    timings["execute_s"] = time.time() - t
    load_after = os.getloadavg()[0]
    (out / "samples.jsonl").write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples))

    scores, excluded = task_scores(prompts, samples, baselines, tuple(config.ks))
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


def _generate(spec: ModelSpec, config: EvalConfig, prompts: list[EvalPrompt],
              key: str | None = None) -> tuple[list[list[str]], float]:
    """The model's responses and the seconds they took: from the generation cache (the same
    weights, prompts and sampling settings: what sampling again would give) or sampled now and stored.
    ``key``: the generation key when the caller has it (hashing a model's weights reads every byte)."""
    key = key or generation_key(spec, config, prompts)
    hit = cached_generations(key)
    if hit is not None:
        log.info("%s: generations from the cache (made in %.1f s)", spec.label, hit[1])
        return hit
    t = time.time()
    responses = make_generator(spec, config).generate(prompts, config.num_samples)
    store_generations(key, responses, time.time() - t)
    return responses, time.time() - t


def pregenerate(spec: ModelSpec, config: EvalConfig, niceness: int = 0) -> float:
    """Generate a model's responses to the evaluation's prompts into the generation cache ahead of
    ``evaluate`` (which then reuses them), at ``niceness`` (this process's CPU priority: work that
    fills idle cores without slowing what runs beside it). Returns the seconds generation took."""
    if niceness:
        os.nice(niceness)
    prompts, _ = load_tasks(config)
    return _generate(spec, config, prompts)[1]


def _generate_all(config: EvalConfig, prompts: list[EvalPrompt]):
    """(spec, (responses, seconds)) of every model as each finishes; with ``parallel_models`` > 1
    the models that load weights generate side by side, each in a process of its own."""
    from perfalign.common.child_process import call_in_child
    from perfalign.common.concurrency import bounded_map

    side_by_side = config.parallel_models > 1 and sum(not m.is_oracle for m in config.models) > 1

    def one(spec: ModelSpec):
        key = generation_key(spec, config, prompts)
        hit = cached_generations(key)  # no child started for it
        if hit is not None:
            return hit
        if side_by_side and not spec.is_oracle:
            return call_in_child(_generate, spec, config, prompts, key)
        return _generate(spec, config, prompts, key)

    for spec, fut in bounded_map(one, config.models, workers=config.parallel_models if side_by_side else 1,
                                 name="generate"):
        yield spec, fut.result()


def score_tasks(prompts: list[EvalPrompt], generations: Responses, run: ScoreRun,
                notes: dict) -> tuple[list[SampleResult], dict[str, BaselineResult]]:
    """Each task scores its own prompts (EvalTask.score): the serial tasks side by side (their
    programs share the sandbox's slots: one task's compiles and tail fill the other's gaps), then
    the others one by one; results in task order. The tasks' notes for the report go into ``notes``."""
    from perfalign.common.concurrency import bounded_map

    by_task: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        by_task.setdefault(task_of(p).name, []).append(i)

    def one(name: str):
        idx = by_task[name]
        answers = {model: [per[i] for i in idx] for model, per in generations.items()}
        return TASKS[name].score([prompts[i] for i in idx], answers, run)

    serial = [n for n, idx in by_task.items() if TASKS[n].serial([prompts[i] for i in idx])]
    scored = {n: fut.result() for n, fut in bounded_map(one, serial, max(1, len(serial)), name="score")}
    scored.update({n: one(n) for n in by_task if n not in scored})
    samples: list[SampleResult] = []
    baselines: dict[str, BaselineResult] = {}
    for name in by_task:
        samples += scored[name].samples
        baselines.update(scored[name].baselines)
        notes.update(scored[name].notes or {})
    return samples, baselines
