"""Several arms x seeds of ``train.run_grpo`` on one shared Dask cluster, the per-seed warm
start shared by the arms, and the aggregate report (niches filled, best GFLOPS per niche, GFLOPS
over steps against the no-RL control, reward latency vs generation time). Used by the flow
``grpo`` and by ``experiments/grpo_proof.py``."""
from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path

from .plots import plot_curves, plot_niche_map
from .records import write_json
from .train import GrpoRunConfig, run_grpo, warm_start
from .workers import BenchmarkCluster

ARMS = ("sqd", "grpo", "control")


def run_experiment(base: GrpoRunConfig, out_dir: str | Path, seeds: list[int], arms: tuple[str, ...] = ARMS,
                   progress=None) -> dict:
    """Every arm for every seed; returns and writes ``report.json`` plus the figures."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    per_arm: dict[str, list[dict]] = {a: [] for a in arms}
    with BenchmarkCluster(base.n_workers, base.cpus_per_worker, base.dask_address, base.measure, base.tiers,
                          sandbox=base.sandbox) as cluster:
        for seed in seeds:
            init = None
            if base.mode == "spec" and base.warmup_steps and not base.init_model_dir:
                init = warm_start(dataclasses.replace(base, seed=seed), out / f"warm-seed{seed}")
            for arm in arms:
                cfg = dataclasses.replace(base, arm=arm, seed=seed, out_dir=str(out / f"{arm}-seed{seed}"),
                                          init_model_dir=base.init_model_dir or init)
                per_arm[arm].append(run_grpo(cfg, cluster=cluster, progress=progress))
    report = summarize(per_arm)
    figures = {}
    if any(per_arm.values()):
        for name, key, label in (("reward", "mean_reward", "mean reward"),
                                 ("gflops", "mean_gflops_ok", "mean GFLOPS (correct rollouts)"),
                                 ("gflops_all", "mean_gflops_all", "mean GFLOPS (failures count 0)")):
            figures[name] = str(plot_curves(per_arm, key, label, out / f"{name}_per_step.png"))
        for problem in base.tasks:
            figures[f"niches_{problem}"] = str(plot_niche_map(per_arm, problem, out / f"niche_map_{problem}.png"))
    report["figures"] = figures
    write_json(report, out / "report.json")
    return report


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _floor_and_peak(run: dict) -> tuple[float | None, float | None]:
    """Median naive-loop GFLOPS and numpy/OpenBLAS peak over a run's measured rollouts."""
    from .records import read_rollouts

    try:
        rows = read_rollouts(run["config"]["out_dir"]).select(["naive_gflops", "peak_gflops"]).to_pylist()
    except (OSError, KeyError, ValueError):
        return None, None
    med = lambda k: statistics.median(v) if (v := [r[k] for r in rows if r[k]]) else None  # noqa: E731
    return med("naive_gflops"), med("peak_gflops")


def summarize(per_arm: dict[str, list[dict]]) -> dict:
    """Per arm: niches filled (mean, per seed), best GFLOPS per niche (max over seeds), GFLOPS of
    the first and last quarter of steps, reward latency and generation time per batch."""
    out: dict = {"arms": {}}
    for arm, runs in per_arm.items():
        if not runs:
            continue
        first, last, niches, above, lat, gen, peaks, floors = [], [], [], [], [], [], [], []
        best: dict[str, dict[str, float]] = {}
        for r in runs:
            steps = r["steps"]
            q = max(1, len(steps) // 4)
            first.append(_mean([s.get("mean_gflops_all") for s in steps[:q]]))
            last.append(_mean([s.get("mean_gflops_all") for s in steps[-q:]]))
            niches.append(sum(r["niches_filled"].values()))
            floor, peak = _floor_and_peak(r)
            floors.append(floor)
            peaks.append(peak)
            # a niche whose best program is slower than the naive triple loop is filled, but poorly
            above.append(sum(1 for d in r["best_per_niche"].values() for g in d.values() if floor and g > floor))
            lat += r["reward_latency_s"]
            gen += r["generation_s"]
            for p, d in r["best_per_niche"].items():
                for n, g in d.items():
                    best.setdefault(p, {})[n] = max(best.get(p, {}).get(n, 0.0), g)
        out["arms"][arm] = {
            "seeds": len(runs), "niches_filled_per_seed": niches, "niches_filled_mean": _mean(niches),
            "gflops_first_quarter_per_seed": first, "gflops_last_quarter_per_seed": last,
            "gflops_gain_per_seed": [(b - a) if a is not None and b is not None else None for a, b in zip(first, last)],
            "niches_above_naive_per_seed": above, "naive_gflops_per_seed": floors, "peak_gflops_per_seed": peaks,
            "best_per_niche": best, "reward_latency_s_median": statistics.median(lat) if lat else None,
            "generation_s_median": statistics.median(gen) if gen else None,
        }
    return out
