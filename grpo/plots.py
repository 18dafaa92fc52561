"""Figures of the controlled proof (matplotlib, Agg): reward and GFLOPS per step per arm (mean
over seeds, band = min..max), and the niche map (best GFLOPS per niche per arm)."""
from __future__ import annotations

from pathlib import Path


def _agg(series: list[list[float | None]]):
    steps = max((len(s) for s in series), default=0)
    mean, lo, hi = [], [], []
    for k in range(steps):
        vals = [s[k] for s in series if k < len(s) and s[k] is not None]
        mean.append(sum(vals) / len(vals) if vals else float("nan"))
        lo.append(min(vals) if vals else float("nan"))
        hi.append(max(vals) if vals else float("nan"))
    return list(range(1, steps + 1)), mean, lo, hi


def plot_curves(per_arm: dict[str, list[dict]], key: str, ylabel: str, path: str | Path) -> Path:
    """``per_arm``: arm -> list (one per seed) of summaries; ``key`` a field of each step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for arm, runs in per_arm.items():
        x, m, lo, hi = _agg([[st.get(key) for st in r["steps"]] for r in runs])
        ax.plot(x, m, label=f"{arm} (mean of {len(runs)} seeds)")
        ax.fill_between(x, lo, hi, alpha=0.2)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(ylabel)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def plot_niche_map(per_arm: dict[str, list[dict]], problem: str, path: str | Path) -> Path:
    """Rows: arms; columns: the 16 niches; cell: best GFLOPS over seeds (blank: never filled)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .sqd import all_niches

    niches = all_niches()
    arms = list(per_arm)
    grid = np.full((len(arms), len(niches)), np.nan)
    for i, arm in enumerate(arms):
        for r in per_arm[arm]:
            for n, g in r["best_per_niche"].get(problem, {}).items():
                j = niches.index(n)
                grid[i, j] = g if np.isnan(grid[i, j]) else max(grid[i, j], g)
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.6 * len(arms)))
    im = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(niches)), niches, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(arms)), arms)
    for i in range(len(arms)):
        for j in range(len(niches)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=7, color="w")
    fig.colorbar(im, ax=ax, label="best GFLOPS")
    ax.set_title(f"{problem}: niche map (best GFLOPS per technique set, over seeds)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
