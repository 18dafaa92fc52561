"""The evaluation report: a JSON record of everything measured, a Markdown summary and figures.

    report = evaluate(config, out_dir)          # writes them already
    write_report(load_report(out_dir / "report.json"), other_dir)   # re-render elsewhere
"""
from __future__ import annotations

import json
from pathlib import Path
from statistics import median_high

from .plots import plot_code_generation, plot_polybench
from .records import EvalReport
from .tasks.registry import TASK_LABELS

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
_CLOCK = {"cpu": "CPU time", "wall": "wall time"}


def load_report(path: str | Path) -> EvalReport:
    return EvalReport.from_dict(json.loads(Path(path).read_text()))


def write_report(report: EvalReport, out_dir: str | Path) -> dict[str, Path]:
    """report.json, report.md and the figures (PNG) into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report.figures = {**plot_code_generation(report, out), **plot_polybench(report, out)}
    (out / REPORT_JSON).write_text(json.dumps(report.to_dict(), indent=1, default=str))
    (out / REPORT_MD).write_text(render_markdown(report))
    return {"json": out / REPORT_JSON, "markdown": out / REPORT_MD, **{k: out / v for k, v in report.figures.items()}}


def _f(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _timing_notes(report: EvalReport) -> list[str]:
    c = report.config
    return [
        "- **CodeContests, the controlled task**: a sample is correct when it passes every test (one run); a "
        "correct one is then timed beside its baseline (the dataset's median-runtime correct submission in the "
        "prompt's language; the controlled task's medium reference) by the contest protocol (measure/contest.py): "
        f"{c['probe']['repeats']} to {c['probe']['max_repeats']} rounds of both on all tests, back to back in a "
        "random order; runtime = mean CPU time over tests, medians over rounds, or the rounds' paired ratio where "
        "the machine drifted (flag `paired_timing`). A sample in another language: its own runs against that "
        "language's dataset median, flagged `baseline_from_dataset`.",
        "- **ParEval, PolyBench** (a checkout or the bundled samples): the probe harness (measure/harness.py). "
        "The candidate is its own translation unit; every call is compared with the suite's reference on inputs "
        "drawn per call from a per-run secret seed; time = the sandbox's accounting of the whole run (CPU time "
        f"for serial code, **wall time** for OpenMP (`OMP_NUM_THREADS={c['omp_threads']}`) and MPI) minus a run "
        f"of the same driver around an empty function, per call, median of {c['probe']['repeats']} or more rounds "
        "(more while the estimate is imprecise) in which the reference (the sequential baseline, the original "
        "kernel) runs beside the samples in a random order; a speedup too noisy to stand behind is withheld "
        "(flag `unmeasurable`); speedups capped and flagged (common.plausibility), implausible ones re-measured "
        "once.",
        "- speedup of a sample = baseline / runtime when it is correct; an incorrect sample (no code, compile "
        "error, runtime error, time limit, wrong result) contributes a speedup of **0** and stays among the n "
        "samples (ParEval's convention): per prompt, speedup_n@1 = (share of correct samples) x (their mean "
        "speedup), and a prompt without a correct sample scores 0.",
        f"- **Clock**: `{c.get('clock', 'cpu')}`" + ("" if c.get("clock", "cpu") == "cpu" else
        " (valgrind's count, deterministic) for ParEval/PolyBench probe runs: runtimes and baselines are counts "
        "per call, not seconds; OpenMP/MPI problems fall back to their wall time (flag `clock_fallback:*`). "
        "CodeContests samples and the median submission re-run beside them are counted the same way (Java "
        "falls back to CPU time, flagged); a sample in another language than the prompt's gets no baseline "
        "under a count (the dataset's medians are CPU seconds)."),
    ]


def render_markdown(report: EvalReport) -> str:
    c, ks = report.config, [str(k) for k in report.config["ks"]]
    lines = [
        "# Evaluation report",
        "",
        f"Generated {report.created_at} on `{report.host.get('node')}` ({report.host.get('cpu')}, "
        f"{report.host.get('cores')} cores, 1-min load average {report.host.get('loadavg_1m', '?')} before/after "
        f"the runs); sandbox backend `{report.sandbox.get('backend')}` "
        f"(isolated: {report.sandbox.get('isolated')}). Every number below comes from programs run in this "
        "evaluation, baselines included.",
        "",
        "## Setup",
        "",
        f"- samples per prompt n = {c['num_samples']}, temperature {c['temperature']}, top-p {c['top_p']}, "
        f"max new tokens {c['max_new_tokens']}, seed {c['seed']}",
        f"- prompts per task: {c['max_prompts_per_task'] or 'all'}",
        *_timing_notes(report),
        "",
        "| model | reference | generation (s) |",
        "| --- | --- | --- |",
        *[f"| {m['label']} | `{m['ref']}` | {_f(m.get('generation_s'), 1)} |" for m in report.models],
        "",
        "## Results",
        "",
        "| model | task | clock | prompts | samples | " + " | ".join(f"pass@{k} | speedup_n@{k}" for k in ks) + " |",
        "| --- | --- | --- | --- | --- | " + " | ".join("--- | ---" for _ in ks) + " |",
    ]
    for s in report.scores:
        vals = " | ".join(f"{_f(s.pass_at.get(k))} | {_f(s.speedup_at.get(k))}" for k in ks)
        lines.append(f"| {s.model} | {TASK_LABELS[s.task]} | {_CLOCK[s.timing]} | {s.prompts} | {s.samples} | {vals} |")
    lines.append("")
    lines += _controls_table(report)
    for name, title in (("pass", "pass@1 (cf. Fig. 5)"), ("speedup", "speedup_n@1 (cf. Fig. 6)"),
                        ("polybench", "PolyBench (cf. Fig. 7)")):
        if name in report.figures:
            lines += [f"![{title}]({report.figures[name]})", ""]
    lines += _polybench_table(report)
    lines += _finetune_table(report)
    lines += ["## Verdicts", "", "| model | task | verdicts |", "| --- | --- | --- |"]
    lines += [f"| {s.model} | {TASK_LABELS[s.task]} | " + ", ".join(f"{k} {v}" for k, v in sorted(s.verdicts.items()))
              + " |" for s in report.scores]
    lines.append("")
    if report.oracle_checks:
        lines += ["## Oracle checks", "",
                  "Pseudo-models answering with known solutions: `reference` (the baseline itself / the median "
                  "submission), `slow` (the baseline doing its work twice / the slowest submission), `fast` (a "
                  "known faster solution). Expected speedup: the known ratio (— where unknown).", "",
                  "| model | task | prompt | correct | expected speedup | measured speedup |",
                  "| --- | --- | --- | --- | --- | --- |"]
        lines += [f"| {o['model']} | {TASK_LABELS[o['task']]} | {o['prompt_id']} | {o['correct']} | "
                  f"{_f(o['expected_speedup'], 2)} | {_f(o['measured_speedup'], 2)} |" for o in report.oracle_checks]
        lines.append("")
    if report.skipped or report.excluded:
        lines += ["## Skipped and excluded prompts", "", "| task | prompt | reason |", "| --- | --- | --- |"]
        lines += [f"| {TASK_LABELS.get(s['task'], s['task'])} | {s['prompt_id']} | {s['reason']} |"
                  for s in report.skipped + report.excluded]
        lines.append("")
    lines += ["## Timings", "", *[f"- {k}: {v:.1f} s" for k, v in report.timings.items()], ""]
    return "\n".join(lines)


def _controls_table(report: EvalReport) -> list[str]:
    """The controls scored beside the models: the reference (expected ~1.0) and a known-slow
    oracle (expected below 1; its true ratio from its own per-call clock where known)."""
    rows = [o for o in report.oracle_checks if o["model"].startswith("control:")]
    if not rows:
        return []
    lines = ["## Controls", "",
             "Scored in the same runs as the models, by the same harness: `control:reference` is the suite's "
             "baseline itself (a working harness measures ~1.0), `control:slow` a known-slower program (the "
             "baseline run twice; expected: its true ratio, from its own per-call clock on probe tasks). If every "
             "model scores 0, these rows still show that compilation, validation and timing work.", "",
             "| control | task | prompts | correct | measured speedup: median [min, max] | expected: median |",
             "| --- | --- | --- | --- | --- | --- |"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for o in rows:
        groups.setdefault((o["model"], o["task"]), []).append(o)
    for (model, task), g in sorted(groups.items()):
        meas = sorted(o["measured_speedup"] for o in g if o["measured_speedup"] is not None)
        exp = [o["expected_speedup"] for o in g if o["expected_speedup"] is not None]
        span = f"{_f(median_high(meas), 2)} [{_f(meas[0], 2)}, {_f(meas[-1], 2)}]" if meas else "—"
        lines.append(f"| {model} | {TASK_LABELS.get(task, task)} | {len(g)} | {sum(o['correct'] for o in g)} | "
                     f"{span} | {_f(median_high(exp), 2) if exp else '—'} |")
    return lines + [""]


def _polybench_table(report: EvalReport) -> list[str]:
    scores = [s for s in report.scores if s.task == "polybench"]
    if not scores:
        return []
    kernels = list(dict.fromkeys(p.prompt_id for s in scores for p in s.per_prompt))
    lines = ["### PolyBench speedup_n@1 per kernel", "", "| model | " + " | ".join(kernels) + " |",
             "| --- | " + " | ".join("---" for _ in kernels) + " |"]
    for s in scores:
        per = {p.prompt_id: p.speedup_at.get("1") for p in s.per_prompt}
        lines.append(f"| {s.model} | " + " | ".join(_f(per.get(k), 2) for k in kernels) + " |")
    return lines + [""]


def _finetune_table(report: EvalReport) -> list[str]:
    rows = [(m["label"], m.get("finetune") or {}) for m in report.models]
    if not any(f for _, f in rows):
        return ["## Fine-tuning metrics", "", "No model is a stage run directory: no fine-tuning metrics.", ""]
    lines = ["## Fine-tuning metrics (eval splits, §VIII-A)", "",
             "| model | stage | SFT perplexity (Eq. 1) | RM accuracy (Eq. 5) | RLPF mean reward | RLPF KL | "
             "DPA accuracy (Eq. 8) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for label, f in rows:
        lines.append(f"| {label} | {f.get('stage', '—')} | {_f(f.get('perplexity'))} | {_f(f.get('rm_accuracy'))} | "
                     f"{_f(f.get('mean_reward'))} | {_f(f.get('kl'))} | {_f(f.get('dpa_accuracy'))} |")
    return lines + [""]
