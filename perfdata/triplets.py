"""Triplets (p, d_f, d_s), SFT prompts and the data splits of the paper (§VII-B).

Recipe, from CodeContests-Perf (D_c) and the synthetic pairs (D_s):

* hold out the evaluation problems (``held_out=True``; ``held_out_count`` tops that up with
  random other contest problems);
* split the rest *by problem* (a contest problem, or a synthetic problem statement, is one
  unit; no unit is in two splits): D_SFT = 40 %, D_align = 60 % (used by both RLPF and DPA),
  D_align -> D_reward 66 % and D_RL the rest (the paper's 33 %); 5 % of each stage's data is its
  eval split (DPA's eval is reward_eval + rl_eval, i.e. 5 % of D_align). Every split is made
  per source (contest / synthetic), so each keeps D's contest:synthetic proportion;
* contest triplets, per (problem, language) — runtimes are only compared within a language:
  d_f random among the 5 fastest correct solutions, d_s random among the slowest 50 %
  (strictly slower than d_f); then a random 5 % of contest triplets get an incorrect
  solution of the same problem and language as d_s;
* synthetic triplets are the verified (fast, slow) pair;
* adaptive margin mu (Eq. 3, lambda = 3), with mu = lambda when d_s is incorrect
  (see alignment.equations.adaptive_margin);
* SFT prompts (Listing 1): instruction (problem -> one of the 5 fastest) and optimization
  (problem + one of the slowest 33 % -> one of the 5 fastest); synthetic: from their pair.

Deterministic for a seed: every random choice uses a generator seeded by (seed, purpose, unit).
Outputs under OUT/data/: ``triplets-00000-of-00001.parquet`` (with ``split``),
``sft_prompts-00000-of-00001.parquet`` (with ``split``), and OUT/stats.json.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from alignment.equations import DEFAULT_MAX_MARGIN, adaptive_margin
from alignment.prompts import LANGUAGE_NAMES, format_response, instruction_prompt, optimization_prompt
from perfdata.shards import shard_files

PROBLEM_COLUMNS = ("problem_id", "description", "held_out")
SUBMISSION_COLUMNS = ("submission_id", "problem_id", "language", "solution", "is_correct", "runtime_s",
                      "verdict", "status")
# perfdata.synth writes these (key: config hash + sample index; CPU times summed over inputs)
SYNTHETIC_COLUMNS = ("key", "problem", "language", "fast", "slow", "fast_cpu_time_s", "slow_cpu_time_s", "speedup")
TRIPLET_SPLITS = ("reward_train", "reward_eval", "rl_train", "rl_eval")
SFT_SPLITS = ("train", "eval")

TRIPLET_SCHEMA = pa.schema([
    ("triplet_id", pa.string()), ("unit_id", pa.string()), ("problem_id", pa.string()),
    ("source", pa.string()), ("language", pa.string()), ("problem", pa.string()), ("prompt", pa.string()),
    ("fast", pa.string()), ("slow", pa.string()), ("fast_id", pa.string()), ("slow_id", pa.string()),
    ("fast_runtime_s", pa.float64()), ("slow_runtime_s", pa.float64()), ("slow_is_correct", pa.bool_()),
    ("speedup", pa.float64()), ("margin", pa.float64()), ("median_runtime_s", pa.float64()),
    ("split", pa.string()),
])
SFT_SCHEMA = pa.schema([
    ("sample_id", pa.string()), ("unit_id", pa.string()), ("problem_id", pa.string()), ("source", pa.string()),
    ("language", pa.string()), ("kind", pa.string()), ("prompt", pa.string()), ("completion", pa.string()),
    ("split", pa.string()),
])


@dataclass
class TripletConfig:
    """Knobs of the recipe; defaults are the paper's (§VII-B, λ from §VII-C2)."""

    seed: int = 0
    held_out_count: int | None = None     # None or 0: exactly the held_out=True problems
    sft_fraction: float = 0.40            # D_SFT share of D
    reward_fraction: float = 0.66         # D_reward share of D_align (D_RL gets the rest)
    eval_fraction: float = 0.05           # each stage's eval share
    fast_top_k: int = 5                   # d_f among the k fastest
    slow_fraction: float = 0.50           # d_s among the slowest half (triplets)
    sft_slow_fraction: float = 0.33       # slow input of optimization prompts
    incorrect_fraction: float = 0.05      # contest triplets whose d_s becomes incorrect code
    max_margin: float = DEFAULT_MAX_MARGIN  # lambda of Eq. 3
    triplets_per_group: int = 2           # triplets per (problem, language)
    sft_prompts_per_group: int = 1        # prompts of each kind per (problem, language)
    languages: tuple[str, ...] = ("cpp", "python3", "java")

    def validate(self) -> None:
        for name in ("sft_fraction", "reward_fraction", "eval_fraction", "slow_fraction", "sft_slow_fraction",
                     "incorrect_fraction"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"TripletConfig.{name} must be in [0, 1], got {v}")
        if self.fast_top_k < 1 or self.triplets_per_group < 1 or self.sft_prompts_per_group < 1:
            raise ValueError("fast_top_k, triplets_per_group and sft_prompts_per_group must be >= 1")
        if self.max_margin < 0:
            raise ValueError("max_margin (lambda) must be >= 0")
        if self.held_out_count is not None and self.held_out_count < 0:
            raise ValueError("held_out_count must be >= 0")
        unknown = set(self.languages) - set(LANGUAGE_NAMES)
        if unknown:
            raise ValueError(f"unknown languages {sorted(unknown)}; known: {sorted(LANGUAGE_NAMES)}")


@dataclass
class TripletOutputs:
    out_dir: Path
    triplets_path: Path
    sft_prompts_path: Path
    stats_path: Path
    stats: dict[str, Any]


@dataclass(frozen=True)
class _Solution:
    id: str
    code: str
    runtime_s: float | None


# --------------------------------------------------------------------------- reading
def table_files(path: str | Path, name: str) -> list[str]:
    """Parquet files of table ``name`` under a dataset folder (DIR/data/<name>-*.parquet), or
    ``path`` itself when it is a Parquet file."""
    p = Path(path)
    if p.is_file():
        return [str(p)]
    # sharded tables (perfdata.shards) and single-file ones (perfdata.synth writes data/<name>.parquet)
    single = p / "data" / f"{name}.parquet"
    files = [str(f) for f in shard_files(p, name)] + ([str(single)] if single.is_file() else [])
    if not files:
        raise FileNotFoundError(f"no table {name!r} under {p} (expected {p}/data/{name}-*.parquet)")
    return files


def read_table(path: str | Path, name: str, required: tuple[str, ...] = ()) -> pa.Table:
    """Read (and schema-check) one table of a dataset folder."""
    files = table_files(path, name)
    table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise ValueError(f"table {name!r} under {path} lacks columns {missing} (has {table.column_names})")
    return table


# --------------------------------------------------------------------------- helpers
def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(":".join([str(seed), *parts]))  # str seeds are stable across runs


def _round(x: float) -> int:
    return int(math.floor(x + 0.5))


def _eval_count(n: int, fraction: float) -> int:
    """5 % of a split, at least one sample when there are two or more units (small datasets
    would otherwise get an empty eval split)."""
    if n < 2 or fraction <= 0:
        return 0
    return min(n - 1, max(1, _round(fraction * n)))


def _synthetic_unit(problem: str) -> str:
    return "synthetic:" + hashlib.sha1(" ".join(problem.split()).encode()).hexdigest()[:16]


def _pairs(fast_pool: list[_Solution], slow_pool: list[_Solution]) -> list[tuple[_Solution, _Solution]]:
    """(fast, slow) with fast strictly faster (the pools overlap when a group is small)."""
    return [(f, s) for f, s in itertools.product(fast_pool, slow_pool)
            if f.id != s.id and f.runtime_s is not None and s.runtime_s is not None and f.runtime_s < s.runtime_s]


def _slowest(sols: list[_Solution], fraction: float) -> list[_Solution]:
    return sols[len(sols) - max(1, math.ceil(len(sols) * fraction)):]


def split_units(units_by_source: dict[str, list[str]], cfg: TripletConfig) -> dict[str, str]:
    """unit -> one of sft_train, sft_eval, reward_train, reward_eval, rl_train, rl_eval,
    made per source so every split keeps D's contest:synthetic proportion."""
    out: dict[str, str] = {}
    for source in sorted(units_by_source):
        ids = sorted(set(units_by_source[source]))
        _rng(cfg.seed, "split", source).shuffle(ids)
        n_sft = _round(cfg.sft_fraction * len(ids))
        align = ids[n_sft:]
        n_reward = _round(cfg.reward_fraction * len(align))
        for stage, part in (("sft", ids[:n_sft]), ("reward", align[:n_reward]), ("rl", align[n_reward:])):
            n_eval = _eval_count(len(part), cfg.eval_fraction)
            for i, u in enumerate(part):
                out[u] = f"{stage}_eval" if i < n_eval else f"{stage}_train"
    return out


# --------------------------------------------------------------------------- build
def build_triplets(out_dir: str | Path, codecontests_dir: str | Path | None = None,
                   synthetic_dir: str | Path | None = None, config: TripletConfig | None = None) -> TripletOutputs:
    """Build the triplet and SFT-prompt tables and stats.json from the two datasets."""
    cfg = config or TripletConfig()
    cfg.validate()
    if codecontests_dir is None and synthetic_dir is None:
        raise ValueError("build_triplets needs codecontests_dir, synthetic_dir, or both")
    stats: dict[str, Any] = {"config": dataclasses.asdict(cfg),
                             "inputs": {"codecontests_dir": str(codecontests_dir) if codecontests_dir else None,
                                        "synthetic_dir": str(synthetic_dir) if synthetic_dir else None}}
    dropped: Counter = Counter()

    # ---- contest problems: correct measured solutions per (problem, language), sorted by runtime
    problems: dict[str, str] = {}
    correct: dict[str, dict[str, list[_Solution]]] = defaultdict(lambda: defaultdict(list))
    incorrect: dict[tuple[str, str], list[_Solution]] = defaultdict(list)
    heldout: list[str] = []
    if codecontests_dir is not None:
        ptab = read_table(codecontests_dir, "problems", PROBLEM_COLUMNS).to_pylist()
        stab = read_table(codecontests_dir, "submissions", SUBMISSION_COLUMNS).select(list(SUBMISSION_COLUMNS))
        flagged = sorted({r["problem_id"] for r in ptab if r["held_out"]})
        others = sorted({r["problem_id"] for r in ptab} - set(flagged))
        extra = max(0, (cfg.held_out_count or 0) - len(flagged))
        heldout = sorted(flagged + _rng(cfg.seed, "heldout").sample(others, min(extra, len(others))))
        held = set(heldout)
        problems = {r["problem_id"]: r["description"] for r in ptab if r["problem_id"] not in held}
        for s in stab.to_pylist():
            pid, lang = s["problem_id"], s["language"]
            if pid not in problems:
                dropped["submissions_of_heldout_problems" if pid in held else "submissions_of_unknown_problems"] += 1
                continue
            if lang not in cfg.languages:
                dropped[f"submissions_language_{lang}"] += 1
                continue
            if not (s["solution"] or "").strip():
                dropped["submissions_empty"] += 1
                continue
            if s["is_correct"]:
                rt = s["runtime_s"]
                if s["status"] == "measured" and s["verdict"] == "OK" and rt is not None and rt == rt and rt >= 0:
                    correct[pid][lang].append(_Solution(s["submission_id"], s["solution"], float(rt)))
                else:
                    dropped["correct_submissions_not_measured_ok"] += 1
            else:
                incorrect[(pid, lang)].append(_Solution(s["submission_id"], s["solution"], None))
        for groups in correct.values():
            for sols in groups.values():
                sols.sort(key=lambda x: (x.runtime_s, x.id))
        for lst in incorrect.values():
            lst.sort(key=lambda x: x.id)

    usable_contest = sorted(pid for pid in problems if any(len(v) >= 2 for v in correct[pid].values()))
    dropped["contest_problems_without_two_correct_in_a_language"] = len(problems) - len(usable_contest)

    # ---- synthetic pairs, grouped by problem statement
    synthetic: dict[str, list[dict]] = defaultdict(list)
    if synthetic_dir is not None:
        for r in read_table(synthetic_dir, "synthetic", SYNTHETIC_COLUMNS).to_pylist():
            if r["language"] not in cfg.languages:
                dropped[f"synthetic_language_{r['language']}"] += 1
            elif not (r["fast"] or "").strip() or not (r["slow"] or "").strip() or r["fast"].strip() == r["slow"].strip():
                dropped["synthetic_invalid_pair"] += 1
            elif r.get("speedup") is not None and not r["speedup"] > 1.0:
                dropped["synthetic_not_faster"] += 1
            else:
                synthetic[_synthetic_unit(r["problem"])].append(r)
        for rows in synthetic.values():
            rows.sort(key=lambda r: str(r["key"]))

    if not usable_contest and not synthetic:
        raise ValueError(f"no usable data: no contest problem with two correct measured solutions in one language "
                         f"({len(problems)} problems after holding out {len(heldout)}) and no valid synthetic pair")
    split_of = split_units({"contest": usable_contest, "synthetic": sorted(synthetic)}, cfg)

    # ---- emit rows
    triplets: list[dict] = []
    sft: list[dict] = []
    for pid in usable_contest:
        split, rng = split_of[pid], _rng(cfg.seed, "sample", pid)
        for lang in sorted(correct[pid]):
            sols = correct[pid][lang]
            if not sols:
                continue
            fast_pool = sols[:cfg.fast_top_k]
            base = dict(unit_id=pid, problem_id=pid, source="contest", language=lang, problem=problems[pid])
            if split.startswith("sft"):
                sft_split = split.removeprefix("sft_")
                prompt = instruction_prompt(problems[pid], lang)
                for j, f in enumerate(rng.sample(fast_pool, min(cfg.sft_prompts_per_group, len(fast_pool)))):
                    sft.append(dict(sample_id=f"{pid}/{lang}/instruction/{j}", unit_id=pid, problem_id=pid,
                                    source="contest", language=lang, kind="instruction", prompt=prompt,
                                    completion=format_response(f.code, lang), split=sft_split))
                pairs = _pairs(fast_pool, _slowest(sols, cfg.sft_slow_fraction))
                for j, (f, s) in enumerate(rng.sample(pairs, min(cfg.sft_prompts_per_group, len(pairs)))):
                    sft.append(dict(sample_id=f"{pid}/{lang}/optimization/{j}", unit_id=pid, problem_id=pid,
                                    source="contest", language=lang, kind="optimization",
                                    prompt=optimization_prompt(problems[pid], lang, s.code),
                                    completion=format_response(f.code, lang), split=sft_split))
                continue
            pairs = _pairs(fast_pool, _slowest(sols, cfg.slow_fraction))
            med = median([s.runtime_s for s in sols])
            for j, (f, s) in enumerate(rng.sample(pairs, min(cfg.triplets_per_group, len(pairs)))):
                triplets.append(dict(base, triplet_id=f"{pid}/{lang}/{j}", prompt=instruction_prompt(problems[pid], lang),
                                     fast=f.code, slow=s.code, fast_id=f.id, slow_id=s.id,
                                     fast_runtime_s=f.runtime_s, slow_runtime_s=s.runtime_s, slow_is_correct=True,
                                     speedup=s.runtime_s / max(f.runtime_s, 1e-9), median_runtime_s=med, split=split))

    # A random 5 % of the contest triplets: d_s := an incorrect solution (same problem + language).
    contest_idx = list(range(len(triplets)))  # only contest triplets exist at this point
    eligible = [i for i in contest_idx if incorrect.get((triplets[i]["problem_id"], triplets[i]["language"]))]
    target = _round(cfg.incorrect_fraction * len(contest_idx))
    rng = _rng(cfg.seed, "incorrect")
    chosen = sorted(rng.sample(eligible, min(target, len(eligible))))
    for i in chosen:
        t = triplets[i]
        bad = rng.choice(incorrect[(t["problem_id"], t["language"])])
        t.update(slow=bad.code, slow_id=bad.id, slow_runtime_s=None, slow_is_correct=False, speedup=None)
    stats["incorrect_replacements"] = {"target": target, "eligible": len(eligible), "done": len(chosen)}

    for unit in sorted(synthetic):
        split = split_of[unit]
        for r in synthetic[unit]:
            sid, lang = str(r["key"]), r["language"]
            if split.startswith("sft"):
                for kind, prompt in (("instruction", instruction_prompt(r["problem"], lang)),
                                     ("optimization", optimization_prompt(r["problem"], lang, r["slow"]))):
                    sft.append(dict(sample_id=f"{sid}/{kind}", unit_id=unit, problem_id=sid, source="synthetic",
                                    language=lang, kind=kind, prompt=prompt, completion=format_response(r["fast"], lang),
                                    split=split.removeprefix("sft_")))
                continue
            fr, sr = r.get("fast_cpu_time_s"), r.get("slow_cpu_time_s")
            triplets.append(dict(triplet_id=sid, unit_id=unit, problem_id=sid, source="synthetic", language=lang,
                                 problem=r["problem"], prompt=instruction_prompt(r["problem"], lang),
                                 fast=r["fast"], slow=r["slow"], fast_id=sid + "/fast", slow_id=sid + "/slow",
                                 fast_runtime_s=fr, slow_runtime_s=sr, slow_is_correct=True,
                                 speedup=r.get("speedup"), median_runtime_s=None, split=split))

    for t in triplets:  # Eq. 3
        t["margin"] = adaptive_margin(t["fast_runtime_s"], t["slow_runtime_s"], is_contest=t["source"] == "contest",
                                      slow_is_correct=t["slow_is_correct"], max_margin=cfg.max_margin)
    triplets.sort(key=lambda t: (t["split"], t["source"], t["problem_id"], t["language"], t["triplet_id"]))
    sft.sort(key=lambda s: (s["split"], s["source"], s["problem_id"], s["language"], s["sample_id"]))

    # ---- write
    out = Path(out_dir)
    (out / "data").mkdir(parents=True, exist_ok=True)
    tpath = out / "data" / "triplets-00000-of-00001.parquet"
    spath = out / "data" / "sft_prompts-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(triplets, schema=TRIPLET_SCHEMA), tpath)
    pq.write_table(pa.Table.from_pylist(sft, schema=SFT_SCHEMA), spath)
    stats.update(_stats(triplets, sft, split_of, heldout, dropped, cfg.max_margin))
    stats_path = out / "stats.json"
    stats_path.write_text(json.dumps(stats, indent=2, sort_keys=True))
    return TripletOutputs(out, tpath, spath, stats_path, stats)


def _stats(triplets: list[dict], sft: list[dict], split_of: dict[str, str], heldout: list[str],
           dropped: Counter, max_margin: float) -> dict[str, Any]:
    units: dict[str, Counter] = defaultdict(Counter)
    for u, s in split_of.items():
        units[s]["synthetic" if u.startswith("synthetic:") else "contest"] += 1
    trip: dict[str, Counter] = defaultdict(Counter)
    for t in triplets:
        trip[t["split"]][t["source"]] += 1
    prompts: dict[str, Counter] = defaultdict(Counter)
    for s in sft:
        prompts[s["split"]][s["source"]] += 1
        prompts[s["split"]][s["kind"]] += 1

    def frac(c: Counter) -> float | None:
        n = c["contest"] + c["synthetic"]
        return round(c["contest"] / n, 4) if n else None

    all_units = sum(units.values(), Counter())
    margins = [t["margin"] for t in triplets]
    return {
        "heldout": {"count": len(heldout), "problem_ids": heldout},
        "dropped": dict(sorted(dropped.items())),
        "units": {k: dict(v) for k, v in sorted(units.items())},
        "triplets": {k: dict(v) for k, v in sorted(trip.items())},
        "sft_prompts": {k: dict(v) for k, v in sorted(prompts.items())},
        "contest_unit_fraction": {"D": frac(all_units), **{k: frac(v) for k, v in sorted(units.items())}},
        "totals": {"units": sum(all_units.values()), "triplets": len(triplets), "sft_prompts": len(sft)},
        "margin": {"mean": round(sum(margins) / len(margins), 4) if margins else None,
                   "zero": sum(m == 0 for m in margins),
                   "at_max": sum(m >= max_margin for m in margins)},
        "languages": dict(sorted(Counter(t["language"] for t in triplets).items())),
    }
