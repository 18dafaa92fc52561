"""The idiom experiment's analysis over seeds (docs/alignment.md, "The arms: RFT, best-of-k, the
gate's families, the analysis", and the confirmatory seeds' section): each seed's result (one dict per
seed, ``alignment_proof.run_seed``) in, the pre-registered reading out. Nothing here samples or trains.

- ``summarize`` / ``format_summary``: shares per model and split with 95 % t-intervals over seeds,
  descriptive paired differences, the four contrasts per endpoint and task, correctness
  non-inferiority, each stage's movement, best-of-k, reward models, real tasks;
- ``contrasts``: the four pre-registered contrasts (paired t over seeds, Holm over the four) with the
  effect their seeds detect at 80 % power; ``noninferiority``: arm - SFT correct share's lower bound;
- ``paired_p``, ``holm``, ``detectable_effect``, ``t_interval``: the statistics they use.
"""
from __future__ import annotations

import math
import statistics

from arms import COMPARISONS, CONTRASTS, ENDPOINTS, HUMANEVAL_FAST, MODELS, SHARES, SPLITS


def paired_p(diffs: list[float]) -> float | None:
    """Two-sided p of the paired t-test over seeds (the per-seed differences against 0); None with
    fewer than 2 seeds or no spread."""
    from scipy.stats import ttest_1samp

    if len(diffs) < 2 or max(diffs) - min(diffs) < 1e-12:  # float noise is no spread
        return None
    return float(ttest_1samp(diffs, 0.0).pvalue)


def detectable_effect(sd: float, seeds: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest true mean paired difference a two-sided paired t-test over ``seeds`` seeds detects
    with probability ``power`` at level ``alpha``, given the seed-level SD of the differences: the
    docs' power table (docs/alignment.md, "Power"), and, with a run's own SD, what its null rules out.
    Under the effect d the statistic is noncentral t (df n - 1, noncentrality d sqrt(n) / sd); solved
    for d. None with fewer than 2 seeds or no SD."""
    from scipy.optimize import brentq
    from scipy.stats import nct, t

    if seeds < 2 or sd is None or not sd > 0:
        return None
    df, crit = seeds - 1, t.ppf(1 - alpha / 2, seeds - 1)

    def shortfall(d: float) -> float:
        nc = d * math.sqrt(seeds) / sd
        lower = nct.cdf(-crit, df, nc)  # the wrong-sign tail: NaN far out in scipy, where it is 0
        return nct.sf(crit, df, nc) + (0.0 if math.isnan(lower) else lower) - power

    return float(brentq(shortfall, 1e-9 * sd, 100 * sd))


def holm(pvalues: dict[str, float | None]) -> dict[str, float | None]:
    """Holm's step-down adjusted p-values over the contrasts that have one (None stays None): the
    i-th smallest of m times (m - i + 1), made monotone, capped at 1."""
    known = sorted((p, k) for k, p in pvalues.items() if p is not None)
    m, out, running = len(known), dict.fromkeys(pvalues), 0.0
    for i, (p, k) in enumerate(known):
        running = max(running, min(1.0, (m - i) * p))
        out[k] = running
    return out


def t_interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % t-interval over seeds."""
    from scipy.stats import t

    m = statistics.fmean(values)
    if len(values) < 2:
        return m, float("nan")
    return m, float(t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values)))


def _stat(vals: list[float]) -> dict:
    return {"per_seed": vals, "mean_ci": t_interval(vals) if vals else (float("nan"), float("nan"))}


def counted(r: dict, name: str) -> bool:
    """A seed's model counts as an arm when it was evaluated and its stage moved (SFT always)."""
    return name in r["samples"] and (name == "sft" or r.get("movement", {}).get(name, {}).get("moved", False))


def contrasts(results: list[dict], split: str) -> dict:
    """The four pre-registered contrasts per endpoint on ``split`` over the seeds where both models
    count (p from the paired t-test), Holm-adjusted over the four: each (task, endpoint) is a family."""
    out = {}
    for key in ENDPOINTS:
        rows = {}
        for a, b in CONTRASTS:
            rs = [r for r in results if counted(r, a) and counted(r, b)
                  and split in r["samples"][a] and split in r["samples"][b]]
            d = [r["samples"][a][split][key] - r["samples"][b][split][key] for r in rs]
            sd = statistics.stdev(d) if len(d) > 1 else None
            rows[f"{a}-{b}"] = {**_stat(d), "seeds": [r["seed"] for r in rs], "p": paired_p(d),
                                # what a null rules out: the effect this many seeds detect with 80 % power at
                                # the seeds' own SD, at α 0.05 and at Holm's first step (α 0.05 / 4)
                                "detectable_80": [detectable_effect(sd, len(d), alpha)
                                                  for alpha in (0.05, 0.05 / len(CONTRASTS))]}
        for name, p in holm({k: v["p"] for k, v in rows.items()}).items():
            rows[name]["p_holm"] = p
        out[key] = rows
    return out


def noninferiority(results: list[dict], split: str, margin: float) -> dict:
    """Per arm that a seed trained: the lower 95 % bound over seeds of arm - SFT correct share on ``split``
    against ``margin``."""
    out = {}
    for name in MODELS[1:]:
        if not any(name in r["samples"] for r in results):  # not among the run's --arms
            continue
        d = [r["samples"][name][split]["correct_share"] - r["samples"]["sft"][split]["correct_share"]
             for r in results if counted(r, name) and split in r["samples"][name] and split in r["samples"]["sft"]]
        m, h = t_interval(d) if d else (float("nan"), float("nan"))
        lower = m - h if h == h else None
        out[name] = {**_stat(d), "lower_95": lower, "margin": margin,
                     "non_inferior": None if lower is None else lower > margin}
    return out


def summarize(results: list[dict], noninferiority_margin: float) -> dict:
    """Shares per model and split, descriptive paired differences, and the pre-registered analysis:
    the four contrasts on the held-out endpoints of the idiom task and of HumanEval (``contrasts``),
    correctness non-inferiority, the movement checks, best-of-k (an oracle selection, beside the arms)."""
    out: dict = {"seeds": [r["seed"] for r in results], "families": results[0].get("families") if results else None,
                 "models": {}, "differences": {}, "contrasts": {}, "noninferiority": {}, "movement": {},
                 # per seed: a seed run with other --samples-per-prompt is an estimate of the same shares
                 "heldout_samples_per_model": [r["samples"]["sft"]["heldout"]["samples"] for r in results]}
    for split in SPLITS:
        for name in MODELS:
            if rs := [r for r in results if split in r["samples"].get(name, {})]:
                out["models"].setdefault(split, {})[name] = {k: _stat([r["samples"][name][split][k] for r in rs])
                                                             for k in SHARES}
        for a, b in COMPARISONS:
            if rs := [r for r in results if split in r["samples"].get(a, {}) and split in r["samples"].get(b, {})]:
                out["differences"].setdefault(split, {})[f"{a}-{b}"] = {
                    k: _stat([r["samples"][a][split][k] - r["samples"][b][split][k] for r in rs]) for k in SHARES}
    out["contrasts"] = contrasts(results, "heldout")
    out["noninferiority"] = noninferiority(results, "heldout", noninferiority_margin)
    if any("humaneval" in r["samples"].get("sft", {}) for r in results):
        out["humaneval"] = {"fast_speedup": HUMANEVAL_FAST, "contrasts": contrasts(results, "humaneval"),
                            "noninferiority": noninferiority(results, "humaneval", noninferiority_margin),
                            "samples_per_model": [r["samples"]["sft"].get("humaneval", {}).get("samples")
                                                  for r in results],
                            # every sample's scoring version (humaneval.SCORER): one, or the reading mixes two
                            "scorers": sorted({v for r in results for m in r["samples"].values()
                                               for v in m.get("humaneval", {}).get("scorers", [1])})}
    for r in results:
        for arm, mv in r.get("movement", {}).items():
            out["movement"].setdefault(arm, []).append({"seed": r["seed"], **mv})
    if bests := [r["best_of_k"] for r in results if r.get("best_of_k")]:
        out["best_of_k"] = {"k": [b["k"] for b in bests], **{k: _stat([b[k] for b in bests]) for k in SHARES}}
    if rms := [r["reward_models"] for r in results if r.get("reward_models")]:
        out["reward_models"] = {name: {k: _stat([x[name][k] for x in rms])
                                       for k in ("heldout_accuracy", "gap_speedup_spearman")}
                                for name in ("rm_margin", "rm_no_margin")}
        out["reward_models"]["margin-no_margin"] = {
            k: _stat([x["rm_margin"][k] - x["rm_no_margin"][k] for x in rms])
            for k in ("heldout_accuracy", "gap_speedup_spearman")}
    for key in sorted({k for r in results for k in r.get("real_tasks", {})}):
        for metric in ("pass@1", "speedup_1@1"):
            vals = [r["real_tasks"][key][metric] for r in results if key in r.get("real_tasks", {})]
            out.setdefault("real_tasks", {}).setdefault(key, {})[metric] = _stat(vals)
    out["eq8_heldout_accuracy"] = {m: t_interval([r["stage_metrics"][m]["eval_accuracy"] for r in results])
                                   for m in ("dpa", "dpo") if all(m in r["stage_metrics"] for r in results)}
    return out


def _fmt(mc) -> str:
    m, h = mc
    return "n/a" if m != m else f"{m:.3f}" if h != h else f"{m:.3f} ± {h:.3f}"


def _p(p) -> str:
    return "n/a" if p is None else f"{p:.4f}"


def format_summary(s: dict) -> str:
    lines = [f"seeds {s['seeds']}; families {s['families']}; mean ± 95 % t-interval over seeds; held-out samples "
             f"per model and seed {s['heldout_samples_per_model']}"
             + (f"; HumanEval {s['humaneval']['samples_per_model']}" if s.get("humaneval") else ""), ""]
    if len(s.get("humaneval", {}).get("scorers", [])) > 1:
        lines += [f"HumanEval's samples were scored by different scorings {s['humaneval']['scorers']}: not one "
                  "measurement; score the older ones again (alignment_proof.py --rescore-humaneval)", ""]
    for split, models in s["models"].items():
        head = (f"HumanEval held-out (fast: >= {HUMANEVAL_FAST}x the canonical)"
                if split == "humaneval" else f"{split} prompts")
        lines += [f"{head} | correct | fast & correct | mean speedup", "--- | --- | --- | ---"]
        for name, row in models.items():
            lines.append(f"{name} | " + " | ".join(_fmt(row[k]["mean_ci"]) for k in SHARES))
        for pair, row in s["differences"].get(split, {}).items():
            lines.append(f"{pair} (paired) | " + " | ".join(_fmt(row[k]["mean_ci"]) for k in SHARES))
        lines.append("")
    if b := s.get("best_of_k"):
        lines += [f"best-of-k (k {b['k']}; oracle selection by the scoring measurement, an upper bound, not an arm): "
                  + ", ".join(f"{k} {_fmt(b[k]['mean_ci'])}" for k in SHARES), ""]
    tasks = [("held-out", s["contrasts"], s["noninferiority"])]
    if h := s.get("humaneval"):
        tasks.append(("HumanEval held-out", h["contrasts"], h["noninferiority"]))
    for task, cs, ni in tasks:
        lines += [f"pre-registered contrast ({task}) | endpoint | seeds counted | mean ± 95 % | p (paired t) | "
                  "p (Holm, 4) | detectable at 80 % power (α 0.05 / Holm's first)",
                  "--- | --- | --- | --- | --- | --- | ---"]
        for key, rows in cs.items():
            for name, row in rows.items():
                lines.append(f"{name} | {key} | {row['seeds']} | {_fmt(row['mean_ci'])} | {_p(row['p'])} | "
                             f"{_p(row['p_holm'])} | " + " / ".join("n/a" if e is None else f"{e:.3f}"
                                                                 for e in row.get("detectable_80", [None, None])))
        lines += ["", f"correctness non-inferiority ({task}: arm - SFT correct share) | mean ± 95 % | lower bound | "
                      "margin | non-inferior", "--- | --- | --- | --- | ---"]
        for name, row in ni.items():
            ok = "n/a" if row["non_inferior"] is None else ("yes" if row["non_inferior"] else "NO")
            lines.append(f"{name} | {_fmt(row['mean_ci'])} | {_p(row['lower_95'])} | {row['margin']} | {ok}")
        lines.append("")
    lines.pop()
    lines += ["", "stage moved? (per seed: value >= threshold) | seeds", "--- | ---"]
    for arm, rows in s["movement"].items():
        lines.append(f"{arm} | " + "; ".join(
            f"seed {m['seed']}: {m['value'] if m['value'] is None else round(m['value'], 3)} >= {m['threshold']} "
            + ("yes" if m["moved"] else "NO (not counted)") for m in rows))
    if s.get("reward_models"):
        lines += ["", "reward model | held-out Eq. 5 accuracy | Spearman(gap, log speedup)", "--- | --- | ---"]
        for name, row in s["reward_models"].items():
            lines.append(f"{name} | {_fmt(row['heldout_accuracy']['mean_ci'])} | "
                         f"{_fmt(row['gap_speedup_spearman']['mean_ci'])}")
    if s.get("real_tasks"):
        lines += ["", "real tasks: model | task | pass@1 | speedup_1@1", "--- | --- | --- | ---"]
        for key, row in s["real_tasks"].items():
            lines.append(" | ".join(key.split("|")) + f" | {_fmt(row['pass@1']['mean_ci'])} | "
                         f"{_fmt(row['speedup_1@1']['mean_ci'])}")
    if e := s["eq8_heldout_accuracy"]:
        lines.append("\nEq. 8 accuracy on the held-out pairs: "
                     + ", ".join(f"{m.upper()} {_fmt(v)}" for m, v in e.items()))
    return "\n".join(lines)
