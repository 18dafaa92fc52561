"""The pipeline stages' input keys (settings + the content of their inputs) and the no-op
answer: a run whose every stage completed with today's keys is reported from its run state
(``unchanged_run``) without a flow, a Prefect server or the stages' libraries."""
from __future__ import annotations

import time
from pathlib import Path

from perfalign.config.tables import PerfalignConfig

from .runstate import RunState, fingerprint


def perf_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str]:
    p = cfg.perf
    # A Hub source is identified by name (its revision is pinned by `datasets`' cache).
    source_key = p.source if p.source.startswith("hf:") else fingerprint(p.source)
    return cfg.section_hash("perf", "sandbox") + fingerprint(extra=[source_key]), p.source


def synth_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str]:
    from perfalign.perfdata.synth.config import resolve_backend

    # the key (or its absence) decides gemini vs the bundled sample: part of the input
    effective, _ = resolve_backend(cfg.synth)
    return (cfg.section_hash("synth", "sandbox") + fingerprint(extra=[effective.backend]),
            f"{effective.backend} seeds={cfg.synth.seeds}")


def controlled_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str] | None:
    """None: no controlled task (``triplets.controlled_task`` off)."""
    t = cfg.triplets
    if not t.controlled_task:
        return None
    return fingerprint(extra=[t.controlled_copies, t.controlled_repeats]), "perfdata.controlled"


def triplets_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str]:
    cc, syn, ctl = run_dir / "codecontests_perf", run_dir / "synthetic", run_dir / "controlled"
    return fingerprint(cc, syn, ctl, extra=cfg.section_hash("triplets")), f"{cc} + {syn}"


def align_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str]:
    tri = run_dir / "triplets"
    tables = ("align", "sft", "reward", "rlpf", "dpa", "triplets", "sandbox")
    return (fingerprint(tri, extra=cfg.section_hash(*tables)),
            str(tri))


def evaluate_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str]:
    work, cc = run_dir / "align", run_dir / "codecontests_perf"
    return fingerprint(work, extra=[cfg.section_hash("eval", "sandbox"), fingerprint(cc)]), str(work)


def publish_key(cfg: PerfalignConfig, run_dir: Path) -> tuple[str, str] | None:
    """None: nothing to publish (no repo id configured)."""
    import dataclasses

    if not cfg.publish.repo_id:
        return None
    src = run_dir / "codecontests_perf"
    return fingerprint(src, extra=dataclasses.asdict(cfg.publish)), str(src)


NOT_PUBLISHED = {"skipped": "no publish.repo_id configured"}
NO_CONTROLLED_TASK = {"skipped": "triplets.controlled_task is off"}
NOT_RUN = {"controlled": NO_CONTROLLED_TASK, "publish": NOT_PUBLISHED}  # a stage whose key is None
KEYS = {"codecontests_perf": perf_key, "synthetic": synth_key, "controlled": controlled_key, "triplets": triplets_key,
        "align": align_key, "evaluate": evaluate_key, "publish": publish_key}


def pipeline_result(run: RunState, done: dict, t0: float) -> dict:
    """What the pipeline returns: each stage's summary, state, seconds and headline."""
    records = run.data["stages"]
    return {"out": str(run.run_dir), "stages": done, "states": {k: v["state"] for k, v in records.items()},
            "seconds": {k: v.get("seconds") for k, v in records.items()},
            "headlines": {k: v.get("headline", "") for k, v in records.items()},
            "wall_seconds": round(time.monotonic() - t0, 1)}


def unchanged_run(cfg: PerfalignConfig, out: str | Path) -> dict | None:
    """The pipeline's result when every stage of ``out`` completed with the keys it has today
    (each is recorded as skipped, as a flow would), else None: the flow must run."""
    t0 = time.monotonic()
    run_dir = Path(out)
    if not (run_dir / "stages.json").is_file():
        return None
    run = RunState(run_dir)
    done = {}
    for stage, key in KEYS.items():
        k = key(cfg, run_dir)
        if k is None:
            done[stage] = NOT_RUN[stage]
            continue
        rec = run.unchanged(stage, k[0])
        if rec is None or (rec.get("summary") or {}).get("failed_batches"):  # the flow retries them
            return None
    run.data["config"] = cfg.to_dict()
    for stage in KEYS:
        if stage not in done:
            done[stage] = run.skip(stage)
    return pipeline_result(run, done, t0)
