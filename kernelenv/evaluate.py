"""Batch evaluation: candidates for a directory of problems -> per-problem scores, the metrics and a
report (``report.md``, ``report.json``, ``scores.jsonl``). Plain Python; the Prefect flow
(``flows/kernel.py``) wires the same steps as tasks."""
from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Callable

from .metrics import Metrics, summarize
from .problems import KernelProblem, find_candidate, load_problems, reference_candidate
from .score import KernelScore, ScoreConfig, Scorer

REFERENCE = "reference"  # --candidates reference: the reference-as-candidate oracle


def plan(problems_dir: str | Path, candidates: str | Path) -> tuple[list[tuple[KernelProblem, str, str]], list[dict]]:
    """(problem, candidate name, candidate source) for every problem that has a candidate, and a
    record for every file that is not a problem or a problem without a candidate."""
    problems, errors = load_problems(problems_dir)
    items = []
    for p in problems:
        if str(candidates) == REFERENCE:
            items.append((p, REFERENCE, reference_candidate(p)))
            continue
        path = find_candidate(p, Path(candidates))
        if path is None:
            errors.append({"path": str(p.path), "error": f"{p.name}: no candidate in {candidates}"})
            continue
        try:
            items.append((p, str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as e:
            errors.append({"path": str(path), "error": f"cannot read the candidate: {e}"})
    return items, errors


def config_for(candidates: str | Path, config: ScoreConfig) -> ScoreConfig:
    """The reference oracle calls the reference's operators by definition: allow them."""
    return dataclasses.replace(config, allow_reference_ops=True) if str(candidates) == REFERENCE else config


def evaluate(problems_dir: str | Path, candidates: str | Path, out: str | Path, config: ScoreConfig = ScoreConfig(),
             scorer: Scorer | None = None, on_score: Callable[[KernelScore], None] | None = None) -> dict:
    items, errors = plan(problems_dir, candidates)
    config = config_for(candidates, config)
    scores = []
    with Scorer(config) if scorer is None else contextlib.nullcontext(scorer) as scorer:  # closes only its own
        for problem, name, source in items:
            scores.append(scorer.score(problem, source, name))
            if on_score:
                on_score(scores[-1])
    return write_report(out, scores, errors, config)


def write_report(out: str | Path, scores: list[KernelScore], errors: list[dict], config: ScoreConfig) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    metrics = summarize(scores)
    report = {"metrics": dataclasses.asdict(metrics), "config": _jsonable(dataclasses.asdict(config)),
              "problems": [s.to_dict() for s in scores], "errors": errors}
    (out / "report.json").write_text(json.dumps(report, indent=1))
    with open(out / "scores.jsonl", "w") as f:
        for s in scores:
            f.write(json.dumps(s.to_dict()) + "\n")
    (out / "report.md").write_text(markdown(metrics, scores, errors, config))
    return report


def _jsonable(d):
    return json.loads(json.dumps(d, default=str))


def _f(v, fmt="{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def markdown(m: Metrics, scores: list[KernelScore], errors: list[dict], config: ScoreConfig) -> str:
    scale = ('auto (one eager call <= %g ms)' % (config.target_s * 1e3) if config.scale is None
             else config.scale)
    lines = ["# Kernel evaluation", "",
             f"{m.n} problems, device {config.device}, {config.threads} thread(s), time = median CPU seconds "
             f"per call over fresh inputs, in rounds interleaved with the eager reference (sandbox cgroup "
             f"accounting; noise gate: measure/timing_stats.py); scale "
             f"{scale}.", "",
             "| metric | value |", "| --- | --- |",
             f"| correct % | {m.correct_pct:.1f} |",
             *[f"| {k} % | {v:.1f} |" for k, v in m.fast_p.items()],
             f"| faster than torch.compile % | {_f(m.faster_than_compile_pct, '{:.1f}')} |",
             f"| geomean speedup over eager | {_f(m.geomean_speedup_eager, '{:.3f}')} |",
             f"| geomean speedup over torch.compile | {_f(m.geomean_speedup_compile, '{:.3f}')} |",
             f"| correct but flagged as a hack | {m.flagged} |",
             f"| verdicts | {', '.join(f'{k}: {v}' for k, v in sorted(m.verdicts.items()))} |",
             f"| mean reward | {_f(m.mean_reward, '{:.3f}')} |", "",
             "| problem | verdict | speedup eager | speedup compile | runtime ms | eager ms | scale | flags |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in scores:
        flags = ", ".join(f for f in s.flags if not f.startswith(("cpu:", "scale:")))
        lines.append(f"| {s.problem} | {s.verdict} | {_f(s.speedup_eager)} | {_f(s.speedup_compile)} | "
                     f"{_f(s.runtime_s and s.runtime_s * 1e3, '{:.3f}')} | "
                     f"{_f(s.eager_s and s.eager_s * 1e3, '{:.3f}')} | "
                     f"{_f(s.scale, '{:g}')} | {flags} |")
    if errors:
        lines += ["", "## Not scored", ""] + [f"- `{e['path']}`: {e['error']}" for e in errors]
    return "\n".join(lines) + "\n"
