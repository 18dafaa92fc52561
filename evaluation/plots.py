"""Figures in the style of the paper's Fig. 5 (pass@1 per code generation task), Fig. 6
(speedup_n@1 per code generation task) and Fig. 7 (PolyBench: pass@1 and the distribution of
per-kernel speedup_n@1). Matplotlib with the Agg backend (no display)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .tasks import CODE_GENERATION_TASKS, TASK_LABELS

if TYPE_CHECKING:
    from .report import EvalReport

_HATCHES = ("", "//", "xx", "..", "\\\\", "++", "oo", "--")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grouped_bars(ax, tasks: list[str], models: list[str], value, skipped: dict[str, str], fmt: str) -> None:
    width = 0.8 / max(1, len(models))
    for m_i, model in enumerate(models):
        xs, ys = [], []
        for t_i, task in enumerate(tasks):
            v = value(model, task)
            if v is not None:
                xs.append(t_i + (m_i - (len(models) - 1) / 2) * width)
                ys.append(v)
        bars = ax.bar(xs, ys, width, label=model, hatch=_HATCHES[m_i % len(_HATCHES)], edgecolor="black", linewidth=0.5)
        ax.bar_label(bars, fmt=fmt, fontsize=7, padding=1)
    for t_i, task in enumerate(tasks):
        if task in skipped:
            ax.text(t_i, 0.05, "skipped", ha="center", va="bottom", fontsize=8, color="grey",
                    transform=ax.get_xaxis_transform())
    ax.set_xticks(range(len(tasks)), [TASK_LABELS[t] for t in tasks])
    ax.legend(fontsize=8, ncols=min(4, len(models)))


def plot_code_generation(report: "EvalReport", out_dir: Path, k: str = "1") -> dict[str, str]:
    """Fig. 5 and Fig. 6 analogues; returns {figure name: file name}."""
    plt = _plt()
    models = [m["label"] for m in report.models]
    tasks = [t for t in CODE_GENERATION_TASKS if report.has_task(t)]
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

        _grouped_bars(ax, tasks, models, value, skipped, fmt)
        ax.set_title(title)
        ax.set_ylabel(f"pass@{k}" if name == "pass" else f"speedup$_n$@{k}")
        if name == "pass":
            ax.set_ylim(0, 1.1)
        else:
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
    dists = [[p.speedup_at[k] for p in report.score(m, "polybench").per_prompt] for m in models]
    right.boxplot(dists, showfliers=True)
    for i, d in enumerate(dists, start=1):  # every kernel as a point: few kernels here
        right.scatter([i] * len(d), d, s=10, alpha=0.6, zorder=3)
    right.set_xticks(range(1, len(models) + 1), models, rotation=30, ha="right")
    right.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    right.set_title(f"per-kernel speedup$_n$@{k}")
    fig.tight_layout()
    file = f"fig_polybench_at_{k}.png"
    fig.savefig(out_dir / file, dpi=120)
    plt.close(fig)
    return {"polybench": file}
