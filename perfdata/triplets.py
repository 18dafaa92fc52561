"""Triplets (p, d_f, d_s), SFT prompts and the data splits of the paper (§VII-B).

Recipe, from CodeContests-Perf (D_c) and the synthetic pairs (D_s):

* hold out the evaluation problems (``held_out=True``; ``held_out_count`` tops that up with
  random other contest problems); a training problem whose *normalised statement* equals a
  held-out one's (Codeforces Div. 1 / Div. 2 twins) is dropped, so nothing leaks into evaluation;
* split the rest *by statement*: problems (contest or synthetic) sharing a normalised statement
  are one unit, and no unit is in two splits: D_SFT = 40 %, D_align = 60 % (used by both RLPF and DPA),
  D_align -> D_reward 66 % and D_RL the rest (the paper's 33 %); 5 % of each stage's data is its
  eval split (DPA's eval is reward_eval + rl_eval, i.e. 5 % of D_align). Every split is made
  per source (contest / synthetic), so each keeps D's contest:synthetic proportion;
* contest triplets, per (problem, language) — runtimes are only compared within a language:
  d_f random among the 5 fastest correct solutions, d_s random among the slowest 50 %
  (strictly slower than d_f); then a random 5 % of contest triplets get an incorrect
  solution of the same problem and language as d_s. A group with fewer than
  ``min_group_solutions`` (10) correct solutions has overlapping top-5 / slowest-half pools and
  yields near-tie pairs: ``small_groups="exclude"`` (default) drops its triplets,
  ``"flag"`` keeps them with ``group_solutions`` recorded (the bundled sample has <= 5 per group);
* synthetic triplets are the verified (fast, slow) pair;
* adaptive margin mu (Eq. 3, lambda = 3), with mu = lambda when d_s is incorrect
  (see common.equations.adaptive_margin);
* SFT prompts (Listing 1): instruction (problem -> one of the 5 fastest) and optimization
  (problem + one of the slowest 33 % -> one of the 5 fastest); synthetic: from their pair.

Deterministic for a seed: every random choice uses a generator seeded by (seed, purpose, unit).
Outputs in OUT: ``triplets/00000-of-00001.parquet`` (with ``split``),
``sft_prompts/00000-of-00001.parquet`` (with ``split``), OUT/stats.json and OUT/README.md (the
dataset card: one config per table, so ``datasets.load_dataset(OUT, "sft_prompts")`` works).
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import random
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import pyarrow as pa

from perfalign.common.equations import DEFAULT_MAX_MARGIN, adaptive_margin
from perfalign.common.prompts import LANGUAGE_NAMES, format_response, instruction_prompt, optimization_prompt
from perfalign.perfdata import shards
from perfalign.perfdata.dataset_card import schema_rows, write_dataset_card
from perfalign.perfdata.shards import load_table, write_parquet
from perfalign.perfdata.submissions import CLOCK_COLUMNS, count_label, measured_correct

PROBLEM_COLUMNS = ("problem_id", "description", "held_out")
SUBMISSION_COLUMNS = ("submission_id", "problem_id", "language", "solution", "is_correct", "runtime_s",
                      "verdict", "status")
# perfdata.synth writes these (key: config hash + sample index; CPU times summed over inputs)
SYNTHETIC_COLUMNS = ("key", "problem", "language", "fast", "slow", "fast_cpu_time_s", "slow_cpu_time_s", "speedup")
TRIPLET_SPLITS = ("reward_train", "reward_eval", "rl_train", "rl_eval")

_COMMON_DOCS = {
    "unit_id": "the split unit: problems sharing a normalised statement (no unit is in two splits)",
    "problem_id": "CodeContests problem id, or the synthetic group",
    "source": "contest (CodeContests-Perf) or synthetic", "language": "cpp / python3 / java",
    "prompt": "the model prompt (Listing 1 format)",
}
# (column, Arrow type, description in the card; None: the common one)
_TRIPLET_COLUMNS = [
    ("triplet_id", pa.string(), "unique key"), ("unit_id", pa.string(), None), ("problem_id", pa.string(), None),
    ("source", pa.string(), None), ("language", pa.string(), None), ("problem", pa.string(), "the problem statement"),
    ("prompt", pa.string(), None),
    ("fast", pa.string(), "d_f: one of the fastest correct solutions"),
    ("slow", pa.string(), "d_s: a slower (or incorrect) solution"),
    ("fast_id", pa.string(), "submission id of d_f"), ("slow_id", pa.string(), "submission id of d_s"),
    ("fast_runtime_s", pa.float64(), "measured runtime of d_f (s)"),
    ("slow_runtime_s", pa.float64(), "measured runtime of d_s (s; null if incorrect)"),
    ("slow_is_correct", pa.bool_(), "false: d_s is an incorrect solution (margin = lambda)"),
    ("speedup", pa.float64(), "slow_runtime_s / fast_runtime_s"),
    ("margin", pa.float64(), "adaptive margin mu (Eq. 3)"),
    ("median_runtime_s", pa.float64(), "median runtime of the group's correct solutions (s)"),
    ("group_solutions", pa.int64(), "correct solutions of the (problem, language) group (contest rows)"),
    ("clock", pa.string(), "what measured the runtimes: cpu (seconds) or a deterministic count (instructions, "
                           "cycles; then the *_runtime_s columns hold counts)"),
    ("split", pa.string(), "reward_train / reward_eval / rl_train / rl_eval"),
]
_SFT_COLUMNS = [
    ("sample_id", pa.string(), "unique key"), ("unit_id", pa.string(), None), ("problem_id", pa.string(), None),
    ("source", pa.string(), None), ("language", pa.string(), None),
    ("kind", pa.string(), "instruction (problem -> fast code) or optimization (problem + slow code -> fast code)"),
    ("prompt", pa.string(), None), ("completion", pa.string(), "the target: one of the fastest correct solutions"),
    ("split", pa.string(), "sft_train / sft_eval"),
]
TRIPLET_SCHEMA = pa.schema([(n, t) for n, t, _ in _TRIPLET_COLUMNS])
SFT_SCHEMA = pa.schema([(n, t) for n, t, _ in _SFT_COLUMNS])
COLUMN_DOCS = {table: {n: d or _COMMON_DOCS[n] for n, _, d in cols}
               for table, cols in (("triplets", _TRIPLET_COLUMNS), ("sft_prompts", _SFT_COLUMNS))}


@dataclass
class TripletConfig:
    """Knobs of the recipe; defaults are the paper's (§VII-B, λ from §VII-C2)."""

    seed: int = 0                         # random seed (splits, choices)
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
    min_group_solutions: int = 10         # correct solutions a (problem, language) group needs (fewer: near-tie pairs)
    small_groups: str = "exclude"         # smaller groups: "exclude" their triplets, or "flag" them
    sft_prompts_per_group: int = 1        # prompts of each kind per (problem, language)
    languages: tuple[str, ...] = ("cpp", "python3", "java")  # others' rows are dropped (paper §IV: C++, Python, Java)

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
        if self.small_groups not in ("exclude", "flag"):
            raise ValueError(f"TripletConfig.small_groups must be 'exclude' or 'flag', got {self.small_groups!r}")
        if self.min_group_solutions < 2:
            raise ValueError("TripletConfig.min_group_solutions must be >= 2 (a pair needs two solutions)")
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


def normalize_statement(text: str | None) -> str:
    """A statement as compared for de-duplication: NFKC, case-folded, every run of characters
    that are not letters or digits one space (twins differ in formatting, not in words)."""
    t = unicodedata.normalize("NFKC", text or "").casefold()
    return " ".join(re.sub(r"[\W_]+", " ", t).split())


def _synthetic_unit(problem: str) -> str:
    return "synthetic:" + hashlib.sha1(normalize_statement(problem).encode()).hexdigest()[:16]


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
    dropped: Counter = Counter()  # every skipped input, by reason (stats.json "dropped")

    contest = _ContestData()
    if codecontests_dir is not None:
        contest = _load_contest(codecontests_dir, cfg, dropped)
        stats["heldout_twins_dropped"] = contest.twins
    # problems with two correct measured solutions in at least one language (a pair needs two)
    usable_contest = sorted(p for p in contest.problems if any(len(v) >= 2 for v in contest.correct[p].values()))
    dropped["contest_problems_without_two_correct_in_a_language"] = len(contest.problems) - len(usable_contest)
    synthetic = (_load_synthetic(synthetic_dir, contest.held_statements, cfg, dropped)
                 if synthetic_dir is not None else {})
    if not usable_contest and not synthetic:
        raise ValueError(f"no usable data: no contest problem with two correct measured solutions in one language "
                         f"({len(contest.problems)} problems after holding out {len(contest.heldout)}) "
                         f"and no valid synthetic pair")
    units = _units_and_splits(usable_contest, contest.problems, synthetic, cfg)
    stats["statement_twins"] = units.twins

    triplets, sft = _contest_rows(usable_contest, contest, units, cfg, dropped)
    stats["incorrect_replacements"] = _replace_slow_with_incorrect(triplets, contest.incorrect, cfg)
    syn_triplets, syn_sft = _synthetic_rows(synthetic, units)
    triplets += syn_triplets
    sft += syn_sft
    for t in triplets:  # the adaptive margin mu (Eq. 3, common.equations.adaptive_margin)
        t["margin"] = adaptive_margin(t["fast_runtime_s"], t["slow_runtime_s"], is_contest=t["source"] == "contest",
                                      slow_is_correct=t["slow_is_correct"], max_margin=cfg.max_margin)
    triplets.sort(key=lambda t: (t["split"], t["source"], t["problem_id"], t["language"], t["triplet_id"]))
    sft.sort(key=lambda s: (s["split"], s["source"], s["problem_id"], s["language"], s["sample_id"]))

    out = Path(out_dir)
    tables = {"triplets": (triplets, TRIPLET_SCHEMA), "sft_prompts": (sft, SFT_SCHEMA)}
    shards.prepare_folder(out)
    paths = {name: write_parquet(shards.table_dir(out, name) / "00000-of-00001.parquet",
                                 pa.Table.from_pylist(rows, schema=schema)) for name, (rows, schema) in tables.items()}
    for name, path in paths.items():  # a rebuild replaces the table: extra shards (controlled ones) go
        for f in shards.shard_files(out, name):
            if f != path:
                f.unlink()
    stats.update(_stats(triplets, sft, units.split_of_unit, contest.heldout, dropped, cfg.max_margin))
    stats["small_groups"] = {"policy": cfg.small_groups, "min_solutions": cfg.min_group_solutions,
                             "triplets_flagged": sum(1 for t in triplets if t.get("group_solutions") is not None
                                                     and t["group_solutions"] < cfg.min_group_solutions)}
    stats_path = out / "stats.json"
    stats_path.write_text(json.dumps(stats, indent=2, sort_keys=True))
    _write_card(out, tables, paths, stats)
    return TripletOutputs(out, paths["triplets"], paths["sft_prompts"], stats_path, stats)


@dataclass
class _ContestData:
    """CodeContests-Perf after holding out the evaluation problems (empty without a contest dir)."""

    problems: dict[str, str] = field(default_factory=dict)  # training problem id -> statement
    heldout: list[str] = field(default_factory=list)
    held_statements: set[str] = field(default_factory=set)  # normalised statements of held-out problems
    twins: list[str] = field(default_factory=list)          # training problems dropped as held-out twins
    # correct measured solutions per problem and language, fastest first
    correct: dict[str, dict[str, list[_Solution]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    incorrect: dict[tuple[str, str], list[_Solution]] = field(default_factory=lambda: defaultdict(list))
    clocks: dict[tuple[str, str], str] = field(default_factory=dict)  # (problem, language) -> its labels' clock


@dataclass
class _Units:
    """Where each contest problem / synthetic group lands: its unit (one per normalised statement) and split."""

    unit_of: dict[str, str]        # problem id or synthetic group -> unit id
    split_of_unit: dict[str, str]  # unit id -> split
    split_of: dict[str, str]       # problem id or synthetic group -> split
    twins: dict[str, int]          # stats.json "statement_twins"


def _heldout_problems(ptab: list[dict], cfg: TripletConfig) -> list[str]:
    """The held_out=True problems, topped up to ``held_out_count`` with random others (§VII-B)."""
    flagged = sorted({r["problem_id"] for r in ptab if r["held_out"]})
    others = sorted({r["problem_id"] for r in ptab} - set(flagged))
    extra = max(0, (cfg.held_out_count or 0) - len(flagged))
    return sorted(flagged + _rng(cfg.seed, "heldout").sample(others, min(extra, len(others))))


def _load_contest(codecontests_dir: str | Path, cfg: TripletConfig, dropped: Counter) -> _ContestData:
    """Training problems (held-out ones and their statement twins removed) and their solutions:
    correct measured ones sorted by runtime, incorrect ones sorted by id."""
    ptab = load_table(codecontests_dir, "problems", PROBLEM_COLUMNS).to_pylist()
    stab = load_table(codecontests_dir, "submissions", SUBMISSION_COLUMNS)
    # the clock columns when present (a deterministic clock's label is its count, not runtime_s)
    stab = stab.select(list(SUBMISSION_COLUMNS) + [c for c in CLOCK_COLUMNS if c in stab.column_names])
    data = _ContestData(heldout=_heldout_problems(ptab, cfg))
    held = set(data.heldout)
    data.held_statements = {normalize_statement(r["description"]) for r in ptab if r["problem_id"] in held} - {""}
    data.problems = {r["problem_id"]: r["description"] for r in ptab if r["problem_id"] not in held}
    data.twins = sorted(pid for pid, d in data.problems.items() if normalize_statement(d) in data.held_statements)
    for pid in data.twins:  # a held-out problem's twin would teach the evaluation's answer
        del data.problems[pid]
    dropped["contest_problems_twin_of_heldout"] = len(data.twins)
    for s in stab.to_pylist():
        pid, lang = s["problem_id"], s["language"]
        if pid not in data.problems:
            dropped["submissions_of_heldout_problems" if pid in held else "submissions_of_unknown_problems"] += 1
        elif lang not in cfg.languages:
            dropped[f"submissions_language_{lang}"] += 1
        elif not (s["solution"] or "").strip():
            dropped["submissions_empty"] += 1
        elif not s["is_correct"]:
            data.incorrect[(pid, lang)].append(_Solution(s["submission_id"], s["solution"], None))
        elif measured_correct(s):
            clock = s.get("clock") or "cpu"  # a group is ranked in one unit: its first label's clock
            if data.clocks.setdefault((pid, lang), clock) != clock:
                dropped["correct_submissions_other_clock"] += 1
                continue
            label = count_label(s) if clock != "cpu" else float(s["runtime_s"])
            data.correct[pid][lang].append(_Solution(s["submission_id"], s["solution"], label))
        else:
            dropped["correct_submissions_not_measured_ok"] += 1
    for groups in data.correct.values():
        for sols in groups.values():
            sols.sort(key=lambda x: (x.runtime_s, x.id))
    for lst in data.incorrect.values():
        lst.sort(key=lambda x: x.id)
    return data


def _load_synthetic(synthetic_dir: str | Path, held_statements: set[str], cfg: TripletConfig,
                    dropped: Counter) -> dict[str, list[dict]]:
    """Valid synthetic pairs grouped by normalised problem statement, each group sorted by key."""
    synthetic: dict[str, list[dict]] = defaultdict(list)
    for r in load_table(synthetic_dir, "synthetic", SYNTHETIC_COLUMNS).to_pylist():
        if held_statements and normalize_statement(r["problem"]) in held_statements:
            dropped["synthetic_twin_of_heldout"] += 1
        elif r["language"] not in cfg.languages:
            dropped[f"synthetic_language_{r['language']}"] += 1
        elif not (r["fast"] or "").strip() or not (r["slow"] or "").strip() or r["fast"].strip() == r["slow"].strip():
            dropped["synthetic_invalid_pair"] += 1
        elif r.get("speedup") is not None and not r["speedup"] > 1.0:
            dropped["synthetic_not_faster"] += 1
        else:
            synthetic[_synthetic_unit(r["problem"])].append(r)
    for rows in synthetic.values():
        rows.sort(key=lambda r: str(r["key"]))
    return synthetic


def _units_and_splits(usable_contest: list[str], problems: dict[str, str], synthetic: dict[str, list[dict]],
                      cfg: TripletConfig) -> _Units:
    """One unit per normalised statement, so twins (contest or synthetic) land in the same split."""
    unit_of: dict[str, str] = {}
    by_statement: dict[str, str] = {}
    for pid in usable_contest:
        n = normalize_statement(problems[pid])
        unit_of[pid] = by_statement.setdefault(n, pid) if n else pid
    for unit in synthetic:
        unit_of[unit] = by_statement.get(normalize_statement(synthetic[unit][0]["problem"]), unit)
    contest_units = sorted(set(unit_of[p] for p in usable_contest))
    synthetic_units = sorted({u for u in unit_of.values() if u.startswith("synthetic:")})
    twins = {"contest_problems_sharing_a_statement": len(usable_contest) - len(contest_units),
             "synthetic_joined_contest_units": len(synthetic) - len(synthetic_units)}
    split_of_unit = split_units({"contest": contest_units, "synthetic": synthetic_units}, cfg)
    return _Units(unit_of, split_of_unit, {k: split_of_unit[u] for k, u in unit_of.items()}, twins)


def _contest_rows(usable_contest: list[str], contest: _ContestData, units: _Units, cfg: TripletConfig,
                  dropped: Counter) -> tuple[list[dict], list[dict]]:
    """Contest triplets and SFT prompts, per (problem, language): runtimes are compared only within a
    language. Every draw for a problem comes from its own generator (seed, "sample", problem)."""
    triplets: list[dict] = []
    sft: list[dict] = []
    for pid in usable_contest:
        split, rng = units.split_of[pid], _rng(cfg.seed, "sample", pid)
        for lang in sorted(contest.correct[pid]):
            sols = contest.correct[pid][lang]  # never empty: a group exists once a solution is added
            if split.startswith("sft"):
                sft += _contest_sft_rows(pid, lang, contest.problems[pid], sols, units.unit_of[pid], split, rng, cfg)
                continue
            if len(sols) < cfg.min_group_solutions:  # near-tie pairs: counted, then dropped ("exclude") or kept
                dropped["small_groups_excluded" if cfg.small_groups == "exclude" else "small_groups_flagged"] += 1
                if cfg.small_groups == "exclude":
                    continue
            triplets += _contest_triplet_rows(pid, lang, contest.problems[pid], sols, units.unit_of[pid], split,
                                              rng, cfg, contest.clocks.get((pid, lang), "cpu"))
    return triplets, sft


def _contest_sft_rows(pid: str, lang: str, problem: str, sols: list[_Solution], unit: str, split: str,
                      rng: random.Random, cfg: TripletConfig) -> list[dict]:
    """Listing 1 prompts of one group: instruction (problem -> one of the k fastest) and optimization
    (problem + one of the slowest 33 % -> one of the k fastest)."""
    base = dict(unit_id=unit, problem_id=pid, source="contest", language=lang, split=split.removeprefix("sft_"))
    fast_pool = sols[:cfg.fast_top_k]
    pairs = _pairs(fast_pool, _slowest(sols, cfg.sft_slow_fraction))
    rows = [dict(base, sample_id=f"{pid}/{lang}/instruction/{j}", kind="instruction",
                 prompt=instruction_prompt(problem, lang), completion=format_response(f.code, lang))
            for j, f in enumerate(rng.sample(fast_pool, min(cfg.sft_prompts_per_group, len(fast_pool))))]
    return rows + [dict(base, sample_id=f"{pid}/{lang}/optimization/{j}", kind="optimization",
                        prompt=optimization_prompt(problem, lang, s.code), completion=format_response(f.code, lang))
                   for j, (f, s) in enumerate(rng.sample(pairs, min(cfg.sft_prompts_per_group, len(pairs))))]


def _contest_triplet_rows(pid: str, lang: str, problem: str, sols: list[_Solution], unit: str, split: str,
                          rng: random.Random, cfg: TripletConfig, clock: str = "cpu") -> list[dict]:
    """Triplets of one group (§VII-B): d_f among the k fastest, d_s among the slowest half, d_f strictly faster."""
    base = dict(unit_id=unit, problem_id=pid, source="contest", language=lang, problem=problem,
                group_solutions=len(sols), clock=clock)
    pairs = _pairs(sols[:cfg.fast_top_k], _slowest(sols, cfg.slow_fraction))
    med = median([s.runtime_s for s in sols])
    return [dict(base, triplet_id=f"{pid}/{lang}/{j}", prompt=instruction_prompt(problem, lang),
                 fast=f.code, slow=s.code, fast_id=f.id, slow_id=s.id,
                 fast_runtime_s=f.runtime_s, slow_runtime_s=s.runtime_s, slow_is_correct=True,
                 speedup=s.runtime_s / max(f.runtime_s, 1e-9), median_runtime_s=med, split=split)
            for j, (f, s) in enumerate(rng.sample(pairs, min(cfg.triplets_per_group, len(pairs))))]


def _replace_slow_with_incorrect(triplets: list[dict], incorrect: dict[tuple[str, str], list[_Solution]],
                                 cfg: TripletConfig) -> dict[str, int]:
    """§VII-B: a random ``incorrect_fraction`` (5 %) of the contest triplets get d_s := an incorrect
    solution of the same problem and language. ``triplets`` must hold only contest triplets."""
    eligible = [i for i, t in enumerate(triplets) if incorrect.get((t["problem_id"], t["language"]))]
    target = _round(cfg.incorrect_fraction * len(triplets))
    rng = _rng(cfg.seed, "incorrect")
    chosen = sorted(rng.sample(eligible, min(target, len(eligible))))
    for i in chosen:
        t = triplets[i]
        bad = rng.choice(incorrect[(t["problem_id"], t["language"])])
        t.update(slow=bad.code, slow_id=bad.id, slow_runtime_s=None, slow_is_correct=False, speedup=None)
    return {"target": target, "eligible": len(eligible), "done": len(chosen)}


def _synthetic_rows(synthetic: dict[str, list[dict]], units: _Units) -> tuple[list[dict], list[dict]]:
    """Synthetic triplets (the verified fast/slow pair) and, in the SFT split, both Listing 1 prompts."""
    triplets: list[dict] = []
    sft: list[dict] = []
    for key in sorted(synthetic):
        split, unit = units.split_of[key], units.unit_of[key]
        for r in synthetic[key]:
            sid, lang = str(r["key"]), r["language"]
            base = dict(unit_id=unit, problem_id=sid, source="synthetic", language=lang)
            if split.startswith("sft"):
                for kind, prompt in (("instruction", instruction_prompt(r["problem"], lang)),
                                     ("optimization", optimization_prompt(r["problem"], lang, r["slow"]))):
                    sft.append(dict(base, sample_id=f"{sid}/{kind}", kind=kind, prompt=prompt,
                                    completion=format_response(r["fast"], lang), split=split.removeprefix("sft_")))
                continue
            triplets.append(dict(base, triplet_id=sid, problem=r["problem"], fast=r["fast"], slow=r["slow"],
                                 prompt=instruction_prompt(r["problem"], lang), fast_id=sid + "/fast",
                                 slow_id=sid + "/slow", fast_runtime_s=r.get("fast_cpu_time_s"),
                                 slow_runtime_s=r.get("slow_cpu_time_s"), slow_is_correct=True,
                                 speedup=r.get("speedup"), median_runtime_s=None, clock="cpu", split=split))
    return triplets, sft


def _write_card(out: Path, tables: dict[str, tuple[list[dict], pa.Schema]], paths: dict[str, Path],
                stats: dict[str, Any]) -> Path | None:
    """README.md with one config per table (tables with rows: `datasets` cannot load an empty
    one), so each loads by name and the triplets by default."""
    desc = {"triplets": "Preference triplets (prompt, fast d_f, slow d_s) with the adaptive margin, for the reward "
                        "model, RLPF and DPA (paper §VII-B).",
            "sft_prompts": "Supervised fine-tuning prompts and completions (Listing 1: instruction and optimization)."}
    specs = {name: {"data_files": paths[name].relative_to(out).as_posix(), "description": desc[name],
                    "schema": schema_rows(schema, COLUMN_DOCS[name])}
             for name, (rows, schema) in tables.items() if rows}
    if not specs:  # nothing to load (stats.json says why)
        return None
    totals = stats.get("totals", {})
    return write_dataset_card(
        out, title="perfalign triplets and SFT prompts", tags=("code", "performance", "preference"),
        description=("Built by perfalign's triplets stage from CodeContests-Perf and the synthetic pairs. "
                     "Every row carries its `split` column (splits are made by statement: no problem is in two). "
                     f"{totals.get('triplets', 0)} triplets, {totals.get('sft_prompts', 0)} SFT prompts; "
                     "the recipe's counts and dropped inputs are in `stats.json`."),
        tables=specs)


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
