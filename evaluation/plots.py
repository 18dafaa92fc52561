"""Figures in the style of the paper's Fig. 5 (pass@1 per code generation task), Fig. 6
(speedup_n@1 per code generation task) and Fig. 7 (PolyBench: pass@1 and the distribution of
per-kernel speedup_n@1). Matplotlib with the Agg backend (no display)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .tasks.registry import CODE_GENERATION_TASKS, TASK_LABELS

if TYPE_CHECKING:
    from .records import EvalReport

_HATCHES = ("", "//", "xx", "..", "\\\\", "++", "oo", "--")
# Fig. 5-6 analogues: the paper's generation tasks, and the controlled task (the one task of the
# embedded run where a tiny model scores above 0: where the signal is).
FIGURE_TASKS = CODE_GENERATION_TASKS + ("controlled",)
# A speedup of 0 (no correct sample) has no place on a log axis: it is an 'x' on the axis line,
# labelled 0, never a bar (gid ZERO_GID, so tests and readers can find them).
ZERO_GID = "speedup-zero"
ZERO_LABEL = "0: no correct sample"


def bootstrap_ci(values: list[float], level: float = 0.95, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (deterministic for a seed)."""
    import random

    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(resamples))
    lo = means[int((1 - level) / 2 * resamples)]
    hi = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grouped_bars(ax, tasks: list[str], models: list[str], value, skipped: dict[str, str], fmt: str,
                  spread=None, count=None, log: bool = False) -> None:
    """Bars per (task, model); ``spread`` -> (lo, hi) error bars, ``count`` -> samples shown
    under each label; on a log axis a 0 is no bar but an 'x' on the axis line (``_zero_marks``)."""
    width = 0.8 / max(1, len(models))
    zeros: list[float] = []
    for m_i, model in enumerate(models):
        xs, ys, errs, labels = [], [], [[], []], []
        for t_i, task in enumerate(tasks):
            v = value(model, task)
            if v is None:
                continue
            x = t_i + (m_i - (len(models) - 1) / 2) * width
            if log and v <= 0:
                zeros.append(x)
                continue
            xs.append(x)
            ys.append(v)
            lo, hi = spread(model, task) if spread else (v, v)
            errs[0].append(max(v - lo, 0.0) if not log else max(v - max(lo, v / 1e3), 0.0))
            errs[1].append(max(hi - v, 0.0))
            n = count(model, task) if count else None
            labels.append((fmt % v) + (f"\nn={n}" if n is not None else ""))
        bars = ax.bar(xs, ys, width, label=model, hatch=_HATCHES[m_i % len(_HATCHES)], edgecolor="black", linewidth=0.5,
                      yerr=errs if spread else None, capsize=2, error_kw={"linewidth": 0.7})
        ax.bar_label(bars, labels=labels, fontsize=6, padding=1)
    if zeros:
        _zero_marks(ax, zeros)
    for t_i, task in enumerate(tasks):
        if task in skipped:
            ax.text(t_i, 0.05, "skipped", ha="center", va="bottom", fontsize=8, color="grey",
                    transform=ax.get_xaxis_transform())
    ax.set_xticks(range(len(tasks)), [TASK_LABELS[t] for t in tasks])
    ax.legend(fontsize=7, ncols=min(4, len(models)), loc="upper center", bbox_to_anchor=(0.5, -0.08))


def _zero_marks(ax, xs: list[float]) -> None:
    """Speedups of 0 at ``xs``: red 'x' markers on the x axis line (axes coordinates, so the
    log scale never moves them), each labelled 0; one legend entry says what they mean."""
    import matplotlib.transforms as mtransforms

    on_axis = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    ax.plot(xs, [0.0] * len(xs), linestyle="none", marker="x", markersize=8, markeredgewidth=1.8, color="crimson",
            transform=on_axis, clip_on=False, zorder=5, label=ZERO_LABEL, gid=ZERO_GID)
    for x in xs:
        ax.text(x, 0.025, "0", transform=on_axis, ha="center", va="bottom", fontsize=7, color="crimson", gid=ZERO_GID)


def _log_axis(ax, values: list[float]) -> None:
    """Log scale with plain tick labels, room above and below the positive values (and the
    1.0 line); zeros are not on this axis (``_zero_marks``)."""
    import matplotlib.ticker as ticker

    ax.set_yscale("log")
    positive = [v for v in values if v and v > 0]
    lo, hi = min(positive + [0.5]), max(positive + [2.0])
    ax.set_ylim(lo / 2.0, hi * 1.6)
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def plot_code_generation(report: "EvalReport", out_dir: Path, k: str = "1") -> dict[str, str]:
    """Fig. 5 and Fig. 6 analogues; returns {figure name: file name}."""
    plt = _plt()
    models = [m["label"] for m in report.models]
    tasks = [t for t in FIGURE_TASKS if report.has_task(t)]
    if not tasks:
        return {}
    skipped = {t: "skipped" for t in tasks if not any(s.task == t for s in report.scores)}
    files = {}
    for name, attr, title, fmt in (("pass", "pass_at", f"Code generation pass@{k}", "%.2f"),
                                   ("speedup", "speedup_at", f"Code generation speedup$_n$@{k}", "%.2f")):
        fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(tasks), 3.6))

        def value(model, task, attr=attr):
            s = report.score(model, task)
            return None if s is None else getattr(s, attr).get(k)

        def spread(model, task, attr=attr):  # 95% bootstrap interval of the mean over prompts
            s = report.score(model, task)
            return bootstrap_ci([getattr(p, attr).get(k, 0.0) for p in s.per_prompt]) if s else (0, 0)

        def count(model, task):
            s = report.score(model, task)
            return s.samples if s else None

        log = name == "speedup"
        _grouped_bars(ax, tasks, models, value, skipped, fmt, spread, count, log=log)
        ax.set_title(title + (" (log scale; bars: 95% CI over prompts)" if log else ""), fontsize=9)
        ax.set_ylabel(f"pass@{k}" if name == "pass" else f"speedup$_n$@{k}")
        if name == "pass":
            ax.set_ylim(0, 1.2)
        else:
            # the error bars' tops too: a bar's label sits on its error bar, and one above the axis is not drawn
            _log_axis(ax, [x for m in models for t in tasks if value(m, t) is not None
                           for x in (value(m, t), spread(m, t)[1])])
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        fig.tight_layout()
        file = f"fig_{name}_at_{k}.png"
        fig.savefig(out_dir / file, dpi=120)
        plt.close(fig)
        files[name] = file
    return files


def plot_polybench(report: "EvalReport", out_dir: Path, k: str = "1") -> dict[str, str]:
    """Fig. 7 analogue: pass@k per model (left), per-kernel speedup_n@k distribution (right)."""
    plt = _plt()
    models = [m["label"] for m in report.models if report.score(m["label"], "polybench")]
    if not models:
        return {}
    fig, (left, right) = plt.subplots(1, 2, figsize=(3.0 + 2.2 * len(models), 3.6),
                                      gridspec_kw={"width_ratios": [1, 1.4]})
    passes = [report.score(m, "polybench").pass_at[k] for m in models]
    bars = left.bar(range(len(models)), passes, edgecolor="black", linewidth=0.5)
    left.bar_label(bars, fmt="%.2f", fontsize=7)
    left.set_xticks(range(len(models)), models, rotation=30, ha="right")
    left.set_ylim(0, 1.1)
    left.set_title(f"PolyBench pass@{k}")
    every = [[p.speedup_at[k] for p in report.score(m, "polybench").per_prompt] for m in models]
    dists = [[v for v in d if v > 0] for d in every]  # the box: kernels with a correct sample
    right.boxplot([d or [float("nan")] for d in dists], showfliers=True)
    for i, d in enumerate(dists, start=1):  # every kernel as a point
        right.scatter([i] * len(d), d, s=10, alpha=0.6, zorder=3)
    zero_at = [i for i, d in enumerate(every, start=1) if any(v <= 0 for v in d)]
    if zero_at:
        _zero_marks(right, zero_at)
    right.set_xticks(range(1, len(models) + 1),
                     [f"{m}\n({report.score(m, 'polybench').prompts} kernels, "
                      f"{sum(v <= 0 for v in d)} at 0)" for m, d in zip(models, every)], rotation=30, ha="right")
    _log_axis(right, [v for d in dists for v in d])
    right.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    right.set_title(f"per-kernel speedup$_n$@{k} (log; x on the axis: 0)", fontsize=9)
    fig.tight_layout()
    file = f"fig_polybench_at_{k}.png"
    fig.savefig(out_dir / file, dpi=120)
    plt.close(fig)
    return {"polybench": file}
