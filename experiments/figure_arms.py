"""The idiom experiment's figure: per model, the share of correct and of fast & correct samples on
the idiom task's held-out prompts and on HumanEval's held-out problems, read from each seed's
``samples_MODEL.json`` (what ``alignment_proof.run_seed`` wrote). Bars are means over the seeds
with 95 % t-intervals over seeds; with one seed, the interval is over prompts (within the seed:
the seed-to-seed spread is not in it, and the title says so).

    .venv/bin/python experiments/figure_arms.py --workdir W --seeds 0 --out docs/img/idiom-arms.png
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # analysis.py, arms.py beside it

from analysis import t_interval  # noqa: E402
from arms import MODELS  # noqa: E402

SHOWN = ("correct_share", "fast_correct_share")
TASKS = {"heldout": "idiom task, held-out prompts", "humaneval": "HumanEval, held-out problems"}
ORDER = ("sft", "rft", "rlpf", "dpa", "dpo", "nll")  # the control and the arms after SFT
assert set(ORDER) == set(MODELS)


def _prompt_shares(report: dict, key: str) -> list[float]:
    """Per prompt, the share of its samples that are ``key`` (HumanEval: withheld samples left out)."""
    out = []
    for counts in report["per_problem"].values():
        n = counts.get("samples", sum(v for k, v in counts.items() if k != "withheld")) - counts.get("withheld", 0)
        hits = counts.get("fast_correct", 0) if key == "fast_correct_share" else counts.get(
            "correct", counts.get("fast_correct", 0) + counts.get("slow_correct", 0))
        if n > 0:
            out.append(hits / n)
    return out


def bars(per_seed: dict[int, dict[str, dict]]) -> dict:
    """{task: {model: {share: (mean, half-width)}}} over the seeds (a model of one seed among several:
    no interval, NaN); with one seed in all, over its prompts."""
    out: dict = {}
    for task in TASKS:
        for model in ORDER:
            reports = [s[model][task] for s in per_seed.values() if task in s.get(model, {})]
            if not reports:
                continue
            for key in SHOWN:  # one seed in all: its share as reported, the spread of its prompts
                mc = (t_interval([r[key] for r in reports]) if len(per_seed) > 1
                      else (reports[0][key], t_interval(_prompt_shares(reports[0], key))[1]))
                out.setdefault(task, {}).setdefault(model, {})[key] = mc
    return out


def read_seeds(workdir: Path, seeds: list[int]) -> dict[int, dict[str, dict]]:
    """Each seed's models' reports; a model whose stage did not move (``movement`` in the seed's
    ``result.json``: the pre-registered check) is left out, as the analysis leaves it out of its arm."""
    per_seed = {}
    for seed in seeds:
        result = workdir / f"seed{seed}" / "result.json"
        movement = json.loads(result.read_text()).get("movement", {}) if result.is_file() else {}
        still = {m for m, v in movement.items() if not v.get("moved", True)}
        if still:
            print(f"seed {seed}: {', '.join(sorted(still))} did not move, not counted", flush=True)
        paths = {m: workdir / f"seed{seed}" / f"samples_{m}.json" for m in ORDER if m not in still}
        found = {m: json.loads(p.read_text()) for m, p in paths.items() if p.is_file()}
        if found:
            per_seed[seed] = found
    if not per_seed:
        raise SystemExit(f"no samples_MODEL.json of seeds {seeds} under {workdir}")
    return per_seed


def plot(values: dict, seeds: list[int], out: Path, counted: dict[str, int] | None = None) -> None:
    """``counted``: per model, the seeds it counts in, named under its bar where fewer than ``seeds``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in TASKS if t in values]
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.2 * len(tasks), 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        models = list(values[task])
        for j, (key, label, hatch) in enumerate((("correct_share", "correct", ""),
                                                 ("fast_correct_share", "fast & correct", "//"))):
            xs = [i + (j - 0.5) * 0.38 for i in range(len(models))]
            ms = [values[task][m][key][0] for m in models]
            hs = [0.0 if h != h else h for h in (values[task][m][key][1] for m in models)]
            b = ax.bar(xs, ms, 0.38, yerr=hs, capsize=2, label=label, hatch=hatch, edgecolor="black", linewidth=0.5,
                       color="white" if j else "lightgrey", error_kw={"linewidth": 0.7})
            ax.bar_label(b, labels=[f"{m:.2f}" for m in ms], fontsize=6, padding=1)
        fewer = {m: n for m, n in (counted or {}).items() if n < len(seeds)}
        ax.set_xticks(range(len(models)), [m.upper() + (f"\n({fewer[m]} seeds)" if m in fewer else "") for m in models])
        ax.set_ylim(0, 1.05)
        ax.set_title(TASKS[task], fontsize=9)
        ax.set_ylabel("share of samples")
        ax.legend(fontsize=7, loc="upper right")
    spread = ("95 % t-interval over seeds" if len(seeds) > 1
              else "one seed: 95 % t-interval over prompts, within the seed")
    fig.suptitle(f"Qwen2.5-Coder-0.5B, seeds {seeds}; {spread}", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=150)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True, help="the experiment's work dir (WORKDIR/seedN/samples_MODEL.json)")
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--out", required=True, help="the PNG to write")
    args = ap.parse_args()
    per_seed = read_seeds(Path(args.workdir), args.seeds)
    values = bars(per_seed)
    counted = {m: sum(m in models for models in per_seed.values()) for m in ORDER}
    plot(values, sorted(per_seed), Path(args.out), counted)
    for task, models in values.items():
        print(task + ": " + "; ".join(f"{m} " + ", ".join(f"{k} {v[0]:.3f} ± {v[1]:.3f}" for k, v in row.items())
                                      for m, row in models.items()))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
