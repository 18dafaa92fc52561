"""Does alignment move the model toward faster code on prompts it was never trained on?

The controlled task (perfdata/controlled.py): 96 training and 12 held-out instances of a family
of small Python problems, each with a fast (closed form), a medium (generator) and a slow (loop)
correct program; runtimes measured in the sandbox, so the adaptive margins vary (~1.1 to 3).
Per seed: SFT on an even mix of the three programs of the training instances, then from that
SFT model DPA (Eq. 7), plain DPO (the same trainer with mu = 0), RLPF (PPO with the executed
Eq. 4 reward), RFT, and on request two reward models (Eq. 2 with and without the margin). Every
model is sampled on the held-out prompts (``--samples-per-prompt`` each; training prompts too with
``ProofConfig.train_prompts``) and every sample runs in the sandbox. Reported per model: share of
correct samples, share of fast-and-correct samples, mean speedup over the references' median
(incorrect samples count 0); per reward model: Eq. 5
accuracy on the held-out pairs and the Spearman correlation of its reward gap with the measured
log speedup. Means over seeds with 95 % t-intervals, and paired differences per seed.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python experiments/alignment_proof.py --seeds 0 1 2

``--profile small`` runs the same proof on the real pretrained model of the small profile
(SmolLM2-135M-Instruct, LoRA; the stages' settings are the profile file's, config/profiles/small.toml)
and also scores base / SFT / DPO / DPA / RLPF on the real tasks (bundled contest problems, ParEval and
PolyBench prompts; pass@1 and speedup_1@1 beside the controls). Every stage and every sampling run is
saved as it finishes, so a seed interrupted (or spanning sessions) resumes where it stopped.

``--families idioms`` trains and evaluates on the idiom families instead (perfdata/idioms.py: fast
and slow are idiom choices, each prompt carries a number the program copies; no medium program;
SFT on a slow-leaning mix, ``ProofConfig.idiom_sft_fast_share`` of the rows fast).

``--sft-only`` runs only each seed's SFT stage (resumable; rerun the same command to continue), the
model the pilot gate is pre-registered for:

    nice -n 10 .venv/bin/python experiments/alignment_proof.py --profile qwen-0.5b --families idioms --sft-only \
        --seeds 0

**HumanEval's held-out problems** are the endpoints' second task (docs/alignment.md, "HumanEval
held-out as an endpoint"): every evaluated model sampled on them (``--humaneval-problems``, default
all 41 on a real model's profile and none on ``embedded``; ``--humaneval-samples`` each), each sample
scored by ``humaneval.score_problem`` (``seedN/eval_MODEL_humaneval/samples.jsonl``, resumable per
problem), the four contrasts Holm-corrected as a family of their own.

``--pilot`` runs only the pilot gate (experiments/pilot.py) before any training: the profile's base
model (or ``--pilot-model``, e.g. an SFT run directory) sampled on the held-out prompts at T 0.2,
each sample classified in the sandbox, and the per-family gate table printed; resumable.

    nice -n 5 .venv/bin/python experiments/alignment_proof.py --profile qwen-0.5b --families idioms --pilot \
        --pilot-samples 8 --pilot-out docs/measurements/pilot-qwen05b-2026-11-28/base

**The arms** (docs/alignment.md, "The arms: RFT, best-of-k, the gate's families, the analysis"):
``--gate GATE_JSON`` (or ``--families-kept``) keeps the families the pilot gate passed for every
stage after SFT and for the evaluation; ``--arms`` picks the stages (dpa, dpo, rlpf, rft, rm, real);
RFT is SFT from the SFT model on the fastest correct of its own k executed samples per training
prompt; best-of-k is read off the SFT model's evaluation samples; the summary holds the four
pre-registered contrasts with Holm's correction, correctness non-inferiority and whether each stage
moved. Every model's samples go through the pilot's path (texts, labels, CPU times in
``seedN/eval_MODEL_heldout/samples.jsonl``, resumable per prompt). ``--plan-only`` prints each
seed's planned CPU-hours per stage:

    nice -n 19 .venv/bin/python experiments/alignment_proof.py --profile qwen-0.5b --families idioms \
        --gate docs/measurements/pilot-qwen05b-2026-11-29/gate.json --arms dpa rft --seeds 0 --workdir W

``--report-only`` prints the analysis of the listed seeds that finished (``analysis.py``: the four
contrasts with Holm's correction, non-inferiority, each contrast's detectable effect at 80 % power)
and the measured CPU per seed and stage, and names the seeds still owed; ``--prune-weights`` deletes
the weights of the listed seeds' models that are trained and evaluated (SFT's once every arm is).
A real model's RLPF runs one per machine (``machine_lock``): a process that finds it taken runs the
seed's other stages and leaves RLPF to a later run of the same command.

``--rescore-humaneval`` scores again, from their saved texts and without a model, the listed seeds'
HumanEval samples scored by an older scoring or withheld (``rescore_humaneval``).

``--records DIR`` keeps a seed's progress where a session's work outlives its machine (a folder of the
repository): the task's measurements and, after every finished unit, the seed's metrics, weights'
digests and evaluation samples, never weights; a new machine restores them and trains again only what
a unit still needs (``experiments/confirmatory.sh`` runs a session's share of the confirmatory seeds).

``--pilot-split train`` samples training prompts instead (the first ``--pilot-prompts`` of them, one
per family in turn) with the same sampling and classification, and reports the table without the
gate's verdict (``table.json``): per family the shares of fast & correct, slow & correct and
incorrect samples, and the prompts with at least one fast & correct sample among k, i.e. whether
RLPF, RFT and best-of-k have anything to reinforce. Use it at the arms' temperature
(``--pilot-temperature 1.0``: RLPF's rollouts and the arms' evaluation sample at T 1.0).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # pilot.py, arms.py, seed_records.py beside it
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from analysis import format_summary, summarize  # noqa: E402
from arms import (  # noqa: E402
    MODELS,
    NO_RESULT,
    best_of_k,
    by_prompt,
    fastest_correct,
    fmt_plan,
    humaneval_report,
    moved,
    nll_rows,
    planned_cpu_s,
    rft_rows,
    rows_report,
)
from seed_records import (  # noqa: E402
    WEIGHTS_DIGEST_FILE,
    bind_samples,
    machine_lock,
    read_json,
    record_timings,
    restore_records,
    save_records,
    weight_files,
    weights_digest,
)

from perfalign.config.fields import PROFILES_DIR  # noqa: E402
from perfalign.config.tables import load_config  # noqa: E402
from perfalign.perfdata.controlled import (  # noqa: E402
    DEFAULT_FAMILY_SET,
    FAMILY_SETS,
    ControlledDataset,
    build_controlled_task,
    load_controlled_task,
    restrict_task,
)

# the stages after SFT (``--arms``); rm: the two reward models; real: the profile's real tasks (not the tiny model)
# nll: DPA's NLL term alone (SFT on the fast references with DPA's schedule), the control for that term
ARMS = ("dpa", "dpo", "rlpf", "rft", "nll", "rm", "real")
HUMANEVAL_SEED_BASE = 10**6  # HumanEval problem i of seed s: BASE + 1000 s + i, apart from the idiom task's 1000 s + i


@dataclass
class ProofConfig:
    workdir: str = "runs/alignment_proof"
    profile: str = "embedded"        # the stages' settings; "small": SmolLM2-135M with the profile's own
    family_set: str = DEFAULT_FAMILY_SET  # the controlled task's problems (perfdata.controlled.FAMILY_SETS)
    # The arms' families (empty: all): the ones the pilot gate passed (``--gate``), pre-registered. The
    # arms' training data (pairs, RL and RFT prompts) and every model's evaluation come from them; SFT
    # trains on all families (the gate judged that model).
    families: tuple[str, ...] = ()
    arms: tuple[str, ...] = ("dpa", "dpo", "rlpf", "rft", "nll", "real")  # rm only on request: not an endpoint, and
    # RLPF here uses the executed Eq. 4 reward, not a reward model
    # Per held-out prompt and model. 4, not 16: with the same prompts and seeds for every model, the
    # within-prompt sampling SD of a paired arm difference over 42 prompts is 0.040 at 4 samples and
    # 0.020 at 16 (pilot at T 1.0, SFT seed 0: within-prompt variance of fast & correct 0.133), beside
    # a seed-level SD of ~0.10 in the power table: 0.108 against 0.102 in all, for a quarter of the cost.
    samples_per_prompt: int = 4
    train_prompts: int = 0           # training prompts also sampled (in-distribution reference; not an endpoint)
    train_samples_per_prompt: int = 8
    sft_epochs: float = 8.0
    # SFT's steps on a real model's profile (None: the profile's [sft] max_steps). The idiom task on
    # Qwen: the profile's 72 x 4 rows; SmolLM2's small profile has 20 (the whole recipe's), so its gate
    # runs with 72 here, the same rows as Qwen's.
    sft_max_steps: int | None = None
    dpa_epochs: float = 1.0
    dpa_learning_rate: float = 1e-4
    rm_epochs: float = 1.0
    rlpf_episodes: int = 192
    rlpf_learning_rate: float = 3e-5
    # RFT: k samples per training prompt at the arms' temperature, raised to at least RLPF's episodes
    # in all (pre-registered: as many executed samples as RLPF's; 126 prompts x 4 = 504 >= 192 on Qwen),
    # then SFT from the SFT model on the fastest correct one per prompt for this many epochs.
    rft_samples_per_prompt: int = 4
    rft_epochs: float = 2.0
    temperature: float = 1.0         # evaluation sampling as RLPF samples: top-k 0, top-p 1
    max_new_tokens: int = 96         # the tiny model's RLPF responses
    pilot_temperature: float = 0.2   # the pre-registered gate's (docs/alignment.md)
    pilot_samples_per_prompt: int = 8
    pilot_max_new_tokens: int = 192  # rows stop at their closing fence; the references are 29-69 tokens
    # Share of fast references among the idiom task's SFT rows (the computations keep their even mix).
    # Pre-registered: at an even mix the SFT model wrote the fast idiom 15-16 of 16 in five of eight
    # families (no headroom); a slow-leaning mix must leave headroom >= 0.3, yet keep the fast idiom
    # in the model's repertoire for RLPF, RFT and best-of-k to find (docs/alignment.md).
    idiom_sft_fast_share: float = 0.25
    # Pre-registered analysis: a stage that did not move this much is not counted as an arm (KL to
    # the SFT model in nats per sequence; DPA's held-out fast - slow log-ratio gap in nats); the
    # correctness non-inferiority margin on the lower 95 % bound of arm - SFT correct share.
    min_rlpf_kl: float = 1.0
    min_dpa_gap: float = 2.0
    noninferiority_margin: float = -0.05
    # HumanEval's held-out problems, the second task of the endpoints (``humaneval_ids``): the first N
    # of the 41 in numeric order, 0 = off; None = the profile's: all 41 on a real model, none on
    # ``embedded`` (its tiny model cannot solve HumanEval).
    humaneval_problems: int | None = None
    # Per problem and model: 2, by cost. A sample costs 37 CPU-s (arms.UNIT_CPU_S, measured: 31
    # generating, 6 scoring): 41 problems x 5 models is 2.1 CPU-hours per seed for each sample per
    # problem, beside 4.1 for the rest of a seed (the plan). With the same seeds for every model, a
    # paired share difference over 41 problems has a sampling SD of sqrt(2 v / (41 k)), v the
    # within-problem variance (0.133 for the idiom task's fast & correct at T 1.0; HumanEval's is not
    # measured yet); beside a seed-level SD s, the CPU cost of a given power goes as seed cost x (s^2 +
    # 2 v / (41 k)): relative to k 2, k 1 costs 1.17 / 1.04 / 0.93 at s 0.05 / 0.07 / 0.10, k 4 1.08 /
    # 1.21 / 1.32. k 2 is the least or near it across the seed SDs we may meet.
    humaneval_samples_per_problem: int = 2
    # rows (samples) per generate() batch: prompts share it (k samples each) when k is smaller; one
    # torch thread samples 1.3-2.1x more per CPU-second at 16 rows than at 2, none more at 8
    # (benchmarks/sampling_batch.py, docs/measurements/sampling-batch-2026-11-29)
    batch_rows: int = 16
    humaneval_max_new_tokens: int = 384  # the base model's greedy answers: 62-321 tokens (docs/results.md)


def get_task(workdir: Path, sandbox, family_set: str = DEFAULT_FAMILY_SET, heldout_only: bool = False,
             sft_fast_share: float | None = None, records: Path | None = None) -> ControlledDataset:
    """Measured once and reused by every seed (and later runs); ``heldout_only``: only the held-out
    instances' references (all the pilot gate needs), in a folder of their own unless the whole
    task is built already (then its held-out references, the ones the seeds' evaluation uses).
    ``records`` (``--records``): the task's measurements are kept in ``records/task`` and a new
    machine builds the task from them (the same thresholds and baselines for every seed)."""
    task = _get_task(workdir, sandbox, family_set, heldout_only, sft_fast_share,
                     records / "task" / "controlled_task.json" if records is not None else None)
    if records is not None and not heldout_only and not (records / "task" / "controlled_task.json").is_file():
        (records / "task").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.root / "controlled_task.json", records / "task" / "controlled_task.json")
    return task


def _get_task(workdir: Path, sandbox, family_set: str, heldout_only: bool, sft_fast_share: float | None,
              measured: Path | None) -> ControlledDataset:
    root = workdir / "task"
    if heldout_only and not (root / "controlled_task.json").exists():
        root = workdir / "pilot_task"
    if (root / "controlled_task.json").exists():
        meta = json.loads((root / "controlled_task.json").read_text())
        built = meta.get("family_set", "computations")
        if built != family_set:
            raise SystemExit(f"{root} holds the {built} task, not {family_set}: give another --workdir")
        if not heldout_only and meta.get("sft_fast_share") != sft_fast_share:  # the pilot reads no SFT row
            raise SystemExit(f"{root} was built with sft_fast_share {meta.get('sft_fast_share')}, not "
                             f"{sft_fast_share}: give another --workdir")
        return load_controlled_task(root)
    if measured is not None and measured.is_file() and not heldout_only:
        print(f"building the task from the measurements in {measured}", flush=True)
        return build_controlled_task(root, copies=1, repeats=3, family_set=family_set, sft_fast_share=sft_fast_share,
                                     measured=json.loads(measured.read_text()))
    return build_controlled_task(root, sandbox=sandbox, copies=1, repeats=3, family_set=family_set,
                                 sft_fast_share=sft_fast_share, **(dict(train=[]) if heldout_only else {}))


def reward_model_report(run_dir: Path, task: ControlledDataset) -> dict:
    """Eq. 5 accuracy on the held-out pairs, and how well the reward gap tracks the measured
    speedup (Spearman of r_f - r_s against log(runtime_s / runtime_f), correct pairs only)."""
    from scipy.stats import spearmanr

    from perfalign.alignment.models import load_sequence_classifier, load_tokenizer
    from perfalign.alignment.scoring import reward_scores
    from perfalign.common.equations import reward_accuracy
    from perfalign.common.prompts import format_response
    from perfalign.perfdata.controlled import preference_pairs

    tok = load_tokenizer(str(run_dir))
    rm = load_sequence_classifier(str(run_dir), tokenizer=tok)
    pairs = [p for i in task.heldout for p in preference_pairs(i, task.runtimes[i.problem_id])]
    prompts = [p["prompt"] for p in pairs]
    r_f = reward_scores(rm, tok, prompts, [format_response(p["fast"], "python3") for p in pairs])
    r_s = reward_scores(rm, tok, prompts, [format_response(p["slow"], "python3") for p in pairs])
    timed = [(float(f - s), math.log(p["slow_runtime_s"] / p["fast_runtime_s"]))
             for f, s, p in zip(r_f, r_s, pairs) if p["slow_is_correct"]]
    rho = spearmanr([g for g, _ in timed], [x for _, x in timed]).statistic
    return {"heldout_accuracy": reward_accuracy(r_f, r_s), "gap_speedup_spearman": float(rho), "pairs": len(pairs)}


def arms_task(task: ControlledDataset, cfg: ProofConfig) -> ControlledDataset:
    """The task the arms train and are evaluated on: the kept families' instances and stage inputs
    (written once into WORKDIR/arms_task, shared by the seeds; another selection is refused)."""
    if not cfg.families:
        return task
    root = Path(cfg.workdir) / "arms_task"
    record = root / "families.json"
    if record.exists() and sorted(json.loads(record.read_text())) != sorted(cfg.families):
        raise SystemExit(f"{root} holds the families {json.loads(record.read_text())}, not {list(cfg.families)}: "
                         "give another --workdir")
    kept = restrict_task(task, cfg.families, root / "triplets")
    record.write_text(json.dumps(list(cfg.families)))
    return kept


def rlpf_episodes(cfg: ProofConfig) -> int:
    r = stage_config(cfg, "rlpf")
    return cfg.rlpf_episodes if cfg.profile == "embedded" else r.max_steps * r.batch_size


def rft_k(cfg: ProofConfig, prompts: int) -> int:
    """RFT's samples per training prompt: at least RLPF's episodes in all (pre-registered)."""
    return max(cfg.rft_samples_per_prompt, math.ceil(rlpf_episodes(cfg) / max(1, prompts)))


def seed_plan(cfg: ProofConfig, task: ControlledDataset, seed: int) -> dict[str, float]:
    """The planned CPU-s per stage of a seed (``arms.planned_cpu_s``) on the kept families, the
    stages and models' samples already done left out (the real tasks are not planned)."""
    from perfalign.alignment.stage_config import METRICS_FILE

    w = Path(cfg.workdir) / f"seed{seed}"
    done = {n for n in ("sft", *ARMS) if (w / n / METRICS_FILE).is_file()} | {p.stem for p in w.glob("samples_*.json")}
    kept = [[i for i in group if not cfg.families or i.family.name in cfg.families] for group in (task.train,
                                                                                              task.heldout)]
    reads = {t: stage_config(cfg, t) for t in ("sft", "dpa", "reward")}
    if cfg.sft_max_steps:
        reads["sft"] = replace(reads["sft"], max_steps=cfg.sft_max_steps)
    rows = {t: max(0, c.max_steps) * c.per_device_train_batch_size * c.gradient_accumulation_steps
            for t, c in reads.items()}  # the embedded profile trains by epochs: not planned
    n_train, n_held = map(len, kept)
    work = {"sft": {"sft_row": rows["sft"]}, "dpa": {"pair": rows["dpa"]}, "dpo": {"pair": rows["dpa"]},
            "rm": {"rm_pair": 2 * rows["reward"]}, "rlpf": {"rlpf_episode": rlpf_episodes(cfg)},
            "rft": {"sample": n_train * rft_k(cfg, n_train), "sft_row": n_train * cfg.rft_epochs},
            "nll": {"sft_row": rows["dpa"]}}
    evaluated = [m for m in MODELS if m == "sft" or m in cfg.arms]
    work["evaluation"] = {"sample": len([m for m in evaluated if f"samples_{m}" not in done])
                          * (n_held * cfg.samples_per_prompt + cfg.train_prompts * cfg.train_samples_per_prompt)}
    if ids := humaneval_ids(cfg):
        from perfalign.alignment.proof import read_samples

        left = [len(ids) * cfg.humaneval_samples_per_problem
                - sum(r["problem_id"] in ids for r in read_samples(w / f"eval_{m}_humaneval" / "samples.jsonl"))
                for m in evaluated]
        work["humaneval"] = {"humaneval_sample": sum(left)}
    return planned_cpu_s({k: v for k, v in work.items()
                          if (k in ("sft", "evaluation", "humaneval") or k in cfg.arms) and k not in done})


def sft_tables(kept: ControlledDataset, out: Path, rows: list[dict]) -> str:
    """The kept task's tables with ``rows`` as the SFT training rows (RFT's, the NLL control's): their folder."""
    return str(restrict_task(kept, tuple(sorted({i.family.name for i in kept.train})), out, sft_train=rows).data_dir)


def nll_schedule(cfg: ProofConfig) -> dict:
    """The NLL-only control trains with DPA's schedule (the profile's [dpa] rate, batch and steps;
    the tiny model's proof settings), so it differs from DPA by the preference term alone."""
    if cfg.profile == "embedded":
        return dict(num_train_epochs=cfg.dpa_epochs, learning_rate=cfg.dpa_learning_rate, max_steps=-1)
    d = stage_config(cfg, "dpa")
    return dict(learning_rate=d.learning_rate, per_device_train_batch_size=d.per_device_train_batch_size,
                gradient_accumulation_steps=d.gradient_accumulation_steps, max_steps=d.max_steps)


def plan_line(cfg: ProofConfig, task: ControlledDataset, seed: int) -> str:
    real = "real" in cfg.arms and cfg.profile != "embedded"
    return (f"seed {seed}, families {list(cfg.families) or 'all'}: {fmt_plan(seed_plan(cfg, task, seed))}"
            + ("; the real tasks' evaluation not planned" if real else ""))


def sample_model(task: ControlledDataset, model_dir: str | Path, out: Path, instances: list, k: int, seed: int,
                 cfg: ProofConfig, sandbox) -> list[dict]:
    """k samples per prompt at the arms' temperature, each executed and classified in the sandbox
    (the pilot's path: rows cut at the closing fence, one row per sample in ``out/samples.jsonl``
    with its text, label and CPU time; resumable per batch). ``prompts_per_batch`` prompts share a
    batch, batch b seeded 1000 x seed + b·P for every model (common random numbers)."""
    from perfalign.alignment.proof import interleaved, sample_and_label

    return sample_and_label(task, str(model_dir), out, interleaved(instances), k, cfg.temperature,
                            cfg.pilot_max_new_tokens, seed=1000 * seed, sandbox=sandbox,
                            prompts_per_batch=prompts_per_batch(cfg, k))


def prompts_per_batch(cfg: ProofConfig, k: int) -> int:
    """Prompts sharing a generate() batch of about ``cfg.batch_rows`` rows at k samples each."""
    return max(1, cfg.batch_rows // k)


def humaneval_ids(cfg: ProofConfig) -> list[str]:
    """The HumanEval held-out problems every model of a seed is sampled on (``cfg.humaneval_problems``;
    its default resolved here, the one place)."""
    n = cfg.humaneval_problems
    if n == 0 or (n is None and cfg.profile == "embedded"):
        return []
    from perfalign.evaluation.tasks import humaneval as he

    try:
        ids = he.split("heldout")
    except FileNotFoundError as e:
        raise SystemExit(f"{e} (or --humaneval-problems 0)") from None
    if n is not None and not 0 < n <= len(ids):
        raise SystemExit(f"--humaneval-problems {n}: HumanEval has {len(ids)} held-out problems (0 = off)")
    return ids[:n]


@functools.cache
def profile_config(profile: str):
    """The profile as this process first read it: every stage of a run trains and samples under
    one schedule, though the TOML be edited while it runs (an edit once reached a running RFT)."""
    return load_config(profile=profile)


def stage_config(cfg: ProofConfig, table: str, **overrides):
    """One stage's settings from the run's profile snapshot, with the run's ``overrides``."""
    return replace(getattr(profile_config(cfg.profile), table), **overrides)


def pin_profile(w: Path, profile: str, text: str | None = None) -> None:
    """A work dir's stages share one profile: its text is kept in ``W/profile.toml`` by the first
    run, and a later run under a different text stops (one line) before it trains anything."""
    text = (PROFILES_DIR / f"{profile}.toml").read_text() if text is None else text
    pin = w / "profile.toml"
    if not pin.exists():
        w.mkdir(parents=True, exist_ok=True)
        pin.write_text(text)
    elif pin.read_text() != text:
        raise SystemExit(f"profile {profile!r} differs from the one {w} began with ({pin}): its stages would mix "
                         f"two schedules; use a new --workdir, or restore the profile")


SCORE_KEYS = ("verdict", "correct", "speedup", "cpu_time_s", "baseline_s", "flags", "message", "scale",
              "function_share", "scorer", "rescored")  # a HumanEval row's keys set by its scoring


def score_humaneval(sandbox, pid: str, text: str, probe) -> dict:
    """A HumanEval sample's verdict, speedup over the canonical solution and CPU time, scored by
    ``humaneval.score_problem`` (the path of ``perfalign eval score --suite humaneval``); a text
    without code is NO_CODE, a canonical solution that cannot run here NO_RESULT (withheld). With the
    scoring's version (``humaneval.SCORER``)."""
    from perfalign.evaluation.records import extract_candidate
    from perfalign.evaluation.tasks import humaneval as he
    from perfalign.measure.harness import ProblemUnusable

    code, _, _ = extract_candidate(text)
    out = {"verdict": "NO_CODE", "correct": False, "speedup": 0.0, "cpu_time_s": None, "baseline_s": None,
           "scorer": he.SCORER}
    if code is None or not code.strip():
        return out
    try:
        sc, info = he.score_problem(sandbox, pid, code, probe)
    except ProblemUnusable as e:
        return {**out, "verdict": NO_RESULT, "message": str(e)}
    return {"verdict": sc.verdict, "correct": sc.correct, "speedup": sc.estimate() if sc.correct else 0.0,
            "cpu_time_s": sc.runtime_s, "baseline_s": sc.baseline_s, "flags": sc.flags, "message": sc.message,
            "scale": info.get("scale"), "function_share": info.get("function_share"), "scorer": he.SCORER}


def rescore_humaneval(w: Path, sandbox, probe) -> dict[str, int]:
    """The seed dir ``w``'s HumanEval samples scored by an older scoring (``scorer`` below
    ``humaneval.SCORER``, none: 1) or withheld (``NO_RESULT``: the problem's canonical could not run on
    the drawn inputs) scored again from their saved texts by ``score_humaneval``, as any sample; no
    model is loaded. A row rescored keeps its sampling keys and notes its old verdict (``rescored``);
    each model's HumanEval report in ``samples_NAME.json`` and ``result.json`` is recomputed from its
    rows where it differs. Rows scored per model."""
    from perfalign.alignment.proof import read_samples
    from perfalign.common.fileio import atomic_write_text
    from perfalign.evaluation.tasks import humaneval as he

    done: dict[str, int] = {}
    result = w / "result.json"
    for f in sorted(w.glob("eval_*_humaneval/samples.jsonl")):
        name = f.parent.name.removeprefix("eval_").removesuffix("_humaneval")
        with machine_lock(w / f".eval_{name}.lock") as mine:  # not a file another process appends to
            if not mine:
                print(f"{f}: left alone, another process is evaluating {name}", flush=True)
                continue
            rows = read_samples(f)
            for i, r in enumerate(rows):
                if r["verdict"] == NO_RESULT or r.get("scorer", 1) < he.SCORER:
                    head = {k: v for k, v in r.items() if k != "text" and k not in SCORE_KEYS}
                    old = f"scorer {r.get('scorer', 1)}: {r['verdict']} {r.get('message') or ''}".strip()
                    rows[i] = {**head, **score_humaneval(sandbox, r["problem_id"], r["text"], probe),
                               "rescored": old[:200], "text": r["text"]}
                    done[name] = done.get(name, 0) + 1
            if done.get(name):
                atomic_write_text(f, "".join(json.dumps(r) + "\n" for r in rows))
            fresh = humaneval_report(rows)
            for path in (w / f"samples_{name}.json", result):  # the reports, where they differ from the rows'
                data = json.loads(path.read_text()) if path.is_file() else {}
                report = data.get("samples", {}).get(name) if path == result else data
                if report and report.get("humaneval") != fresh:  # none: not yet evaluated
                    report["humaneval"] = fresh
                    atomic_write_text(path, json.dumps(data, indent=2 if path == result else None, default=str))
    return done


def sample_humaneval(model_dir: str | Path, out: Path, ids: list[str], k: int, seed: int, cfg: ProofConfig,
                     sandbox) -> list[dict]:
    """k samples per HumanEval problem at the arms' temperature by the one sampler
    (``alignment.proof.sample_resumable``: ``prompts_per_batch`` problems to a batch, in the order
    of their canonical solutions' lengths so that a batch's rows end close together, rows cut at
    the closing fence, appended per batch), each scored by ``score_humaneval``; one row per sample in
    ``out/samples.jsonl`` (text, verdict, speedup, CPU time). Batch b gets the seed
    ``HUMANEVAL_SEED_BASE + 1000 x seed + b·P`` for every model (common random numbers). The rows of
    ``ids``."""
    from perfalign.alignment.proof import sample_resumable
    from perfalign.evaluation.tasks import humaneval as he

    probe = stage_config(cfg, "eval").probe

    def rows_of(pid: str, texts: list[str], meta: list[dict]) -> list[dict]:
        return [{"problem_id": pid, "sample": j, **m, **score_humaneval(sandbox, pid, text, probe), "text": text}
                for j, (text, m) in enumerate(zip(texts, meta))]

    by_length = sorted(ids, key=lambda pid: (len(he.problem(pid).canonical_solution), pid))
    rows = sample_resumable(str(model_dir), out, [(pid, he.model_prompt(he.problem(pid))) for pid in by_length], k,
                            cfg.temperature, cfg.humaneval_max_new_tokens, HUMANEVAL_SEED_BASE + 1000 * seed, rows_of,
                            prompts_per_batch=prompts_per_batch(cfg, k))
    return [r for r in rows if r["problem_id"] in ids]


RLPF_LOCK = Path(tempfile.gettempdir()) / "perfalign-rlpf.lock"  # one real-model RLPF per machine


TRAINED_FROM_SFT = ("dpa", "dpo", "rlpf", "rft", "nll", "rm_margin", "rm_no_margin")


def weights_needed(w: Path, name: str, cfg: ProofConfig) -> bool:
    """Whether model ``name`` of the seed dir ``w`` is still needed as weights: it is not yet
    evaluated, or (SFT) an arm of ``cfg`` still trains (or trains again) or samples from it."""
    from perfalign.alignment.stage_config import METRICS_FILE

    if name in MODELS and not evaluated(w, name, len(humaneval_ids(cfg))):
        return True
    if name != "sft":
        return False
    arms = {"rm": ("rm_margin", "rm_no_margin")}
    # an arm still to train, or to train again (its weights gone before its evaluation was done)
    pending = [a for arm in cfg.arms for a in arms.get(arm, (arm,)) if a in TRAINED_FROM_SFT and (
        not (w / a / METRICS_FILE).is_file() or not weight_files(w / a) and weights_needed(w, a, cfg))]
    return bool(pending) or ("rft" in cfg.arms and not (w / "rft_samples" / "chosen.json").is_file())


def run_seed(task: ControlledDataset, seed: int, cfg: ProofConfig, sandbox, sft_only: bool = False,
             records: Path | None = None) -> dict:
    """Every stage of one seed in ``cfg.arms``, its samples and reports; ``sft_only``: the SFT stage
    alone, its metrics. Each stage and each model's samples resume where they stopped. ``records``:
    a folder kept across machines (``save_records``): the seed's records are restored from
    ``records/seedN`` first and saved there after each stage and each model's evaluation, so a new
    machine resumes at the last finished unit (a stage whose weights are gone is trained again
    only while they are still needed)."""
    from perfalign.alignment.dpa import run_dpa
    from perfalign.alignment.reward_model import train_reward_model
    from perfalign.alignment.rlpf import run_rlpf
    from perfalign.alignment.sft import run_sft
    from perfalign.alignment.stage_config import METRICS_FILE

    w = Path(cfg.workdir) / f"seed{seed}"
    w.mkdir(parents=True, exist_ok=True)
    pairs = dict(train_splits=("reward_train",), eval_splits=("reward_eval",))
    # the tiny model's proof settings; a real-model profile keeps its file's own (max_steps, rates)
    tiny = cfg.profile == "embedded"
    timings_file = w / "timings.json"
    if records is not None:
        restore_records(records / f"seed{seed}", w)
    timings = record_timings(timings_file)
    metrics, runs = {}, {}

    def save():
        if records is not None:
            save_records(w, records / f"seed{seed}", len(humaneval_ids(cfg)))

    def stage(table, name, data_path=str(task.data_dir), **kw):
        run_dir = w / name
        # another process training the same stage (e.g. SFT, which every arm trains from): wait for it
        with machine_lock(w / f".{name}.lock", wait=True):
            if (run_dir / METRICS_FILE).is_file() and (weight_files(run_dir) or sft_only
                                                        or not weights_needed(w, name, cfg)):
                metrics[name], runs[name] = json.loads((run_dir / METRICS_FILE).read_text()), run_dir
                return  # finished earlier: resume after it
            # trained on a machine that kept only its records (its weights are gone) and still needed:
            # trained again, and whether the weights came out the same is recorded
            before = read_json(run_dir / WEIGHTS_DIGEST_FILE) if (run_dir / METRICS_FILE).is_file() else None
            fn = {"sft": run_sft, "dpa": run_dpa, "reward": train_reward_model, "rlpf": run_rlpf}[table]
            t, cpu = time.time(), time.process_time()
            res = fn(stage_config(cfg, table, output_dir=str(run_dir), data_path=data_path, seed=seed,
                            overwrite=True, **kw))
            # this process's CPU, all its threads
            key = name if before is None else f"{name}_again"  # the CPU of training again, beside the first's
            timings.update(record_timings(timings_file, **{key: round(time.time() - t, 1),
                                                           f"{key}_cpu": round(time.process_time() - cpu, 1)}))
            digest = {"sha256": weights_digest(run_dir)}
            if before is not None:
                digest["rederived_from"] = before.get("sha256")
                digest["identical"] = before.get("sha256") == digest["sha256"]
                print(f"seed {seed}: {name} trained again (its weights were not on this machine): weights "
                      f"{'identical' if digest['identical'] else 'DIFFERENT'} to the first training's", flush=True)
            (run_dir / WEIGHTS_DIGEST_FILE).write_text(json.dumps(digest))
            metrics[name], runs[name] = res.metrics, res.run_dir
        print(f"seed {seed}: {name} done in {timings[key]} s", flush=True)
        save()

    if not sft_only:
        print(plan_line(cfg, task, seed), flush=True)
    stage("sft", "sft", **(dict(num_train_epochs=cfg.sft_epochs) if tiny else {}),
          **({"max_steps": cfg.sft_max_steps} if cfg.sft_max_steps else {}))
    if sft_only:
        return {"seed": seed, "sft": metrics["sft"], "timings": timings}
    kept = arms_task(task, cfg)
    sft_dir, arm_data = str(w / "sft"), str(kept.data_dir)
    for name, use_margin in (("dpa", True), ("dpo", False)):
        if name in cfg.arms:
            stage("dpa", name, data_path=arm_data, model_name_or_path=sft_dir, use_margin=use_margin, **pairs,
                  **(dict(num_train_epochs=cfg.dpa_epochs, learning_rate=cfg.dpa_learning_rate) if tiny else {}))
    if "rm" in cfg.arms:
        for name, use_margin in (("rm_margin", True), ("rm_no_margin", False)):
            stage("reward", name, data_path=arm_data, use_margin=use_margin, **pairs,
                  **(dict(num_train_epochs=cfg.rm_epochs) if tiny else {}))
    deferred = []
    if "rlpf" in cfg.arms:
        # a real model's RLPF holds ~13-15 GB (policy, reference, a fully trained value model and its
        # optimizer): two at once were killed for memory on a 24 GB host. One per machine; a process
        # that finds it taken does the seed's other stages and leaves RLPF to a later pass.
        done = tiny or (w / "rlpf" / METRICS_FILE).is_file()
        with contextlib.nullcontext(True) if done else machine_lock(RLPF_LOCK) as mine:
            if mine:
                stage("rlpf", "rlpf", data_path=arm_data, model_name_or_path=sft_dir,
                      codecontests_dir=str(task.codecontests_dir), eval_before=False, eval_samples_per_prompt=2,
                      **(dict(per_device_train_batch_size=8, num_mini_batches=2, total_episodes=cfg.rlpf_episodes,
                              learning_rate=cfg.rlpf_learning_rate, response_length=cfg.max_new_tokens)
                         if tiny else {}))
            else:
                deferred.append("rlpf")
                print(f"seed {seed}: RLPF deferred, another process holds {RLPF_LOCK}; rerun to finish it",
                      flush=True)
    rft = {}
    if "rft" in cfg.arms:
        rft = run_rft(kept, seed, cfg, w, sandbox, stage)
    if "nll" in cfg.arms:
        stage("sft", "nll", data_path=sft_tables(kept, w / "nll_data", nll_rows(kept.train)),
              model_name_or_path=sft_dir, **nll_schedule(cfg))

    train_subset = random.Random(seed).sample(kept.train, min(cfg.train_prompts, len(kept.train)))
    samples, best, he_ids = {}, None, humaneval_ids(cfg)

    def evaluate_model(name: str) -> dict:
        """The model's samples on the held-out prompts (and HumanEval's), resumed where they stopped."""
        path = w / f"samples_{name}.json"
        if path.exists():
            samples[name] = json.loads(path.read_text())
        else:
            t = time.time()
            for split in ("heldout", "train") if train_subset else ("heldout",):
                bind_samples(w / f"eval_{name}_{split}", Path(runs[name]))
            samples[name] = {split: rows_report(kept, sample_model(kept, runs[name], w / f"eval_{name}_{split}",
                                                                   instances, n, seed, cfg, sandbox))
                             for split, instances, n in (("heldout", kept.heldout, cfg.samples_per_prompt),
                                                         ("train", train_subset, cfg.train_samples_per_prompt))
                             if instances}
            path.write_text(json.dumps(samples[name]))
            timings.update(record_timings(timings_file, **{f"sample_{name}": round(time.time() - t, 1)}))
            save()  # the idiom task's evaluation is a unit of its own, before HumanEval's
        if he_ids and samples[name].get("humaneval", {}).get("problems") != len(he_ids):
            t = time.time()
            bind_samples(w / f"eval_{name}_humaneval", Path(runs[name]))
            samples[name]["humaneval"] = humaneval_report(sample_humaneval(
                runs[name], w / f"eval_{name}_humaneval", he_ids, cfg.humaneval_samples_per_problem, seed, cfg,
                sandbox))
            path.write_text(json.dumps(samples[name]))
            timings.update(record_timings(timings_file, **{f"humaneval_{name}": round(time.time() - t, 1)}))
        return samples[name]

    for name in (m for m in MODELS if m in runs):
        path = w / f"samples_{name}.json"
        if not evaluated(w, name, len(he_ids)):
            # another process evaluating the same model (e.g. SFT's, by each arm's process): leave it to it
            with machine_lock(w / f".eval_{name}.lock") as mine:
                if not mine:
                    deferred.append(name)
                    print(f"seed {seed}: {name}'s evaluation deferred, another process runs it", flush=True)
                    continue
                samples[name] = evaluate_model(name)
            save()
        samples[name] = json.loads(path.read_text())
    if "sft" in samples:  # the SFT model's own evaluation samples, no extra sampling
        from perfalign.alignment.proof import read_samples

        best = best_of_k(kept, read_samples(w / "eval_sft_heldout" / "samples.jsonl"))
    out = {"seed": seed, "arms": [a for a in cfg.arms if a not in deferred],  # a deferred arm: not finished
           "families": sorted({i.family.name for i in kept.heldout}),
           "humaneval_problems": len(he_ids),
           "samples": samples, "best_of_k": best, "rft": rft, "stage_metrics": metrics, "timings": timings,
           "movement": {m: moved(m, metrics[m], cfg.min_rlpf_kl, cfg.min_dpa_gap) for m in metrics if m != "sft"}}
    if "rm" in cfg.arms:
        out["reward_models"] = {name: {**reward_model_report(runs[name], kept),
                                       "eval_accuracy_stage": metrics[name]["eval_accuracy"]}
                                for name in ("rm_margin", "rm_no_margin")}
    if not tiny and "real" in cfg.arms:
        out["real_tasks"] = real_task_scores(w, cfg, seed, [m for m in MODELS if m in runs])
    return out


def run_rft(kept: ControlledDataset, seed: int, cfg: ProofConfig, w: Path, sandbox, stage) -> dict:
    """RFT: k samples of the SFT model per training prompt at the arms' temperature, each executed
    in the sandbox (``w/rft_samples/samples.jsonl``: texts, labels, CPU times), the fastest correct
    one per prompt kept (``rft_rows``; ``chosen.json``), then SFT from the SFT model on those rows
    (the profile's LoRA, ``cfg.rft_epochs``). No correct sample anywhere: no training. The samples are
    drawn by one process of the machine at a time (``.rft_samples.lock``): another waits, then finds
    them drawn (two processes appending to one file measured 104 samples twice, 2026-11-30)."""
    k = rft_k(cfg, len(kept.train))
    out = w / "rft_samples"
    with machine_lock(w / ".rft_samples.lock", wait=True):
        if not (out / "chosen.json").is_file():
            bind_samples(out, w / "sft")
        rows = sample_model(kept, w / "sft", out, kept.train, k, seed, cfg, sandbox)
        chosen = rft_rows(rows, kept.train)
        (out / "chosen.json").write_text(json.dumps(chosen, indent=1))
    best = [fastest_correct(rs) for rs in by_prompt(rows).values()]
    info = {"samples_per_prompt": k, "prompts": len(kept.train), "executed_samples": len(rows),
            "rlpf_episodes": rlpf_episodes(cfg), "rows": len(chosen),
            "fast_rows": sum(b is not None and b["label"] == "fast_correct" for b in best)}
    if chosen:
        stage("sft", "rft", data_path=sft_tables(kept, w / "rft_data", chosen), model_name_or_path=str(w / "sft"),
              num_train_epochs=cfg.rft_epochs, max_steps=-1)
    return info


def real_task_scores(w: Path, cfg: ProofConfig, seed: int, models: list[str]) -> dict:
    """pass@1 and speedup_1@1 of base / SFT / DPO / DPA / RLPF on the real tasks (the profile's
    evaluation settings: bundled contest problems, ParEval and PolyBench prompts), with the controls."""
    from perfalign.evaluation import ModelSpec, evaluate

    base = json.loads((w / "sft" / "stage_config.json").read_text())["model_name_or_path"]
    models = [ModelSpec("base", base)] + [ModelSpec(f"+{m.upper()}", str(w / m)) for m in models]
    tasks = tuple(t for t in stage_config(cfg, "eval").tasks if t != "controlled")
    extra = {"codecontests_dir": str(contest_tables(w.parent, cfg))} if "codecontests" in tasks else {}
    report = evaluate(stage_config(cfg, "eval", models=models, tasks=tasks, seed=seed, **extra), w / "eval")
    return {f"{s.model}|{s.task}": {"pass@1": s.pass_at["1"], "speedup_1@1": s.speedup_at["1"]}
            for s in report.scores}


def contest_tables(root: Path, cfg: ProofConfig) -> Path:
    """CodeContests-Perf of the profile's contest source (the bundled sample by default), built
    once beside the seeds and shared by them: the real contest prompts' tests and baselines.
    The build is incremental: an interrupted one resumes."""
    from perfalign.perfdata.perf_build import build
    from perfalign.perfdata.shards import card_written

    perf = stage_config(cfg, "perf")
    out = root / "codecontests_perf"
    if not card_written(out):
        print(f"building CodeContests-Perf from {perf.source} into {out} (once, shared by the seeds)", flush=True)
        build(perf.source, out, perf.build_settings(), limit_problems=perf.limit_problems, workers=2,
              sandbox=stage_config(cfg, "sandbox"))
    return out


def reward_noise(task: ControlledDataset, sandbox, runs: int = 5) -> dict:
    """The Eq. 4 reward of the same correct program measured ``runs`` times (no cache), with 1
    repeat per test and with the labels' 3: the spread a policy update sees for no change."""
    from perfalign.alignment.data import load_contest_problems
    from perfalign.alignment.performance_reward import PerformanceReward, PromptInfo
    from perfalign.common.prompts import format_response

    inst = max(task.heldout, key=lambda i: i.big_n)
    problems = load_contest_problems(task.codecontests_dir, {inst.problem_id})
    info = PromptInfo(inst.prompt, inst.problem_id, "python3", "contest")
    text = format_response(inst.program("fast"), "python3")
    out = {"problem_id": inst.problem_id, "program": "fast"}
    for repeats in (1, 3):
        rewards = [PerformanceReward(problems, sandbox=sandbox, repeats=repeats, cache=False)([info], [text])[0].reward
                   for _ in range(runs)]
        out[f"repeats_{repeats}"] = {"rewards": [round(r, 3) for r in rewards], "min": round(min(rewards), 3),
                                     "max": round(max(rewards), 3), "stdev": round(statistics.stdev(rewards), 3)}
    return out


def pilot_gate(task: ControlledDataset, cfg: ProofConfig, model: str | None, out: Path, prompts: int | None,
               sandbox, split: str = "heldout") -> int:
    """The pilot gate on the held-out prompts (the first ``prompts`` of them, spread over the
    families in turn); writes ``out/gate.json`` beside the per-sample ``out/samples.jsonl``. On the
    training prompts the same table without the verdict goes to ``out/table.json``."""
    from pilot import format_gate, format_reach, gate_table

    from perfalign.alignment.proof import interleaved, sample_and_label

    model = model or profile_config(cfg.profile).align.base_model
    t0, c0, load0 = time.time(), time.process_time(), os.getloadavg()
    instances = task.heldout if split == "heldout" else task.train
    rows = sample_and_label(task, model, out, interleaved(instances)[:prompts], cfg.pilot_samples_per_prompt,
                            cfg.pilot_temperature, cfg.pilot_max_new_tokens, sandbox=sandbox)
    table = gate_table(rows, verdict=split == "heldout")
    path = out / ("gate.json" if split == "heldout" else "table.json")
    path.write_text(json.dumps(
        {"model": model, "profile": cfg.profile, "split": split, "temperature": cfg.pilot_temperature,
         "samples_per_prompt": cfg.pilot_samples_per_prompt, "prompts": sorted({r["problem_id"] for r in rows}),
         "generation_cpu_s": round(sum(r["prompt_generation"]["cpu_s"] for r in rows if r["sample"] == 0), 1),
         "this_run": {"wall_s": round(time.time() - t0, 1), "process_cpu_s": round(time.process_time() - c0, 1),
                      "loadavg_start": load0, "loadavg_end": os.getloadavg()},
         "table": table}, indent=1))
    print(format_gate(table) if split == "heldout" else format_reach(table))
    print(f"\nwritten {path}; {time.time() - t0:.0f} s")
    return 0


def finished_seed(w: Path, seed: int, cfg: ProofConfig) -> dict | None:
    """A seed's result when it ran every arm of ``cfg`` and HumanEval's problems, else None."""
    path = w / f"seed{seed}" / "result.json"
    done = json.loads(path.read_text()) if path.exists() else None
    models = ("sft", *(a for a in cfg.arms if a in MODELS))
    if done and set(cfg.arms) <= set(done.get("arms", ())) and done.get("humaneval_problems", 0) == len(
            humaneval_ids(cfg)) and all(m in done.get("samples", {}) for m in models):
        return done
    return None


UNRECORDED = " (resumed, earlier runs not recorded)"  # a CPU row that lacks a resumed stage's earlier runs


def seed_cpu(w: Path) -> dict[str, float]:
    """A seed's measured CPU-s per stage (``w`` = WORKDIR/seedN). Training: timings.json's ``NAME_cpu``,
    the CPU of the process that finished the stage, plus, for a resumed stage, its earlier processes'
    up to the checkpoint it resumed from (metrics.json's ``spent_before_resume``; the row is marked
    ``(resumed, earlier runs not recorded)`` where that is unknown). Sampling: every sample file's
    generation CPU, each prompt's share of its batch counted once (resumes included). The sandbox's
    scoring of the samples is not in these."""
    from perfalign.alignment.proof import read_samples
    from perfalign.alignment.stage_config import METRICS_FILE

    timings = {}
    for name in ("result.json", "timings.json"):  # both: before record_timings, one process could drop another's
        if (w / name).is_file():
            timings.update(json.loads((w / name).read_text()).get("timings", {}) if name == "result.json"
                           else json.loads((w / name).read_text()))
    out = {}
    for key, cpu in timings.items():
        if not key.endswith("_cpu"):
            continue
        name = key.removesuffix("_cpu")
        metrics = read_json(w / name.removesuffix("_again") / METRICS_FILE)
        if not metrics.get("resumed_from_step"):
            out[f"train {name}"] = cpu
        elif before := metrics.get("spent_before_resume"):
            out[f"train {name}"] = round(cpu + before["cpu_s"], 1)
        else:
            out[f"train {name}{UNRECORDED}"] = cpu
    for d in sorted(p for p in w.iterdir() if (p / "samples.jsonl").is_file()):
        per_prompt = {r["problem_id"]: (r.get("prompt_generation") or {}).get("cpu_s", 0.0)
                      for r in read_samples(d / "samples.jsonl")}
        name = d.name.removeprefix("eval_").replace("_", " ")
        name = "sft, RFT's training prompts" if d.name == "rft_samples" else name
        out["sample " + name] = round(sum(per_prompt.values()), 1)
    return out


def format_cpu(per_seed: dict[int, dict[str, float]]) -> str:
    """CPU-hours per stage (rows) and seed (columns), with each seed's total."""
    stages = sorted({k for v in per_seed.values() for k in v}, key=lambda k: (not k.startswith("train"), k))
    lines = ["CPU-hours (this process; scoring apart) | " + " | ".join(f"seed {s}" for s in per_seed),
             "---" + " | ---" * len(per_seed)]
    for k in stages:
        lines.append(f"{k} | " + " | ".join("" if k not in v else f"{v[k] / 3600:.2f}" for v in per_seed.values()))
    # a stage resumed without its earlier runs' record: the seed's total is a lower bound
    lines.append("total | " + " | ".join(("≥ " if any(k.endswith(UNRECORDED) for k in v) else "")
                                         + f"{sum(v.values()) / 3600:.2f}" for v in per_seed.values()))
    return "\n".join(lines)


def evaluated(w: Path, name: str, humaneval_problems: int) -> bool:
    """Whether model ``name`` of the seed dir ``w`` has its held-out samples and, when HumanEval is
    on, every problem's (``samples_NAME.json``): nothing left that needs its weights."""
    path = w / f"samples_{name}.json"
    if not path.is_file():
        return False
    s = json.loads(path.read_text())
    return "heldout" in s and (not humaneval_problems or s.get("humaneval", {}).get("problems") == humaneval_problems)


def prune_weights(w: Path, arms: tuple[str, ...], humaneval_problems: int) -> list[str]:
    """Delete the weight files of the seed's models that are trained and evaluated (a real model's
    stage is ~2.4 GB; eight seeds of six models do not fit this host's disk), keeping their metrics,
    configs and samples; SFT's only once every arm of ``arms``, which train from it, is trained and
    evaluated. A ``PRUNED`` file says what went. The names pruned."""
    from perfalign.alignment.stage_config import METRICS_FILE

    def done(name: str) -> bool:
        return (w / name / METRICS_FILE).is_file() and evaluated(w, name, humaneval_problems)

    pruned = []
    for name in (*[a for a in arms if a in MODELS], "sft"):
        if not done(name) or name == "sft" and not all(done(a) for a in arms if a in MODELS):
            continue
        files = weight_files(w / name)
        for f in files:
            f.unlink()
        if files:
            (w / name / "PRUNED").write_text("weights deleted once trained and evaluated: "
                                             + ", ".join(f.name for f in files) + "\n")
            pruned.append(name)
    return pruned


def report_only(w: Path, seeds: list[int], cfg: ProofConfig) -> int:
    """The analysis of the seeds that finished, while the others are still running or owed, and the
    measured CPU per seed and stage of every listed seed begun so far."""
    results = [r for seed in seeds if (r := finished_seed(w, seed, cfg))]
    owed = [seed for seed in seeds if seed not in {r["seed"] for r in results}]
    cpu = format_cpu({s: seed_cpu(w / f"seed{s}") for s in seeds if (w / f"seed{s}").is_dir()})
    if not results:
        print(cpu)  # the progress so far
        raise SystemExit(f"no seed of {seeds} has finished in {w} (for arms {list(cfg.arms)})")
    print(format_summary(summarize(results, cfg.noninferiority_margin)))
    print("\n" + cpu)
    print(f"\nseeds finished {[r['seed'] for r in results]}; still owed {owed}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=ProofConfig.profile, choices=("embedded", "small", "qwen-0.5b"),
                    help="the stages' settings and model (small: SmolLM2-135M-Instruct with LoRA; "
                         "qwen-0.5b: Qwen2.5-Coder-0.5B-Instruct)")
    ap.add_argument("--families", default=DEFAULT_FAMILY_SET, choices=FAMILY_SETS,
                    help="the controlled task's problems: closed-form computations, or idiom choices "
                         "(perfdata/idioms.py)")
    ap.add_argument("--workdir", default=None, help="default: runs/alignment_proof (_PROFILE for another --profile, "
                                                    "_idioms for --families idioms)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--samples-per-prompt", type=int, default=ProofConfig.samples_per_prompt)
    ap.add_argument("--humaneval-problems", type=int, default=None, metavar="N",
                    help="HumanEval held-out problems every evaluated model is sampled on: the first N of the 41 "
                         "in numeric order, 0 = off (default: all 41 on qwen-0.5b and small, 0 on embedded)")
    ap.add_argument("--humaneval-samples", type=int, default=ProofConfig.humaneval_samples_per_problem, metavar="K",
                    help="samples per HumanEval problem and model, at the arms' temperature")
    ap.add_argument("--sft-epochs", type=float, default=ProofConfig.sft_epochs)
    ap.add_argument("--sft-max-steps", type=int, default=None, metavar="N",
                    help="SFT's steps on a real model's profile (default: the profile's [sft] max_steps)")
    ap.add_argument("--rlpf-episodes", type=int, default=ProofConfig.rlpf_episodes)
    ap.add_argument("--arms", nargs="+", default=list(ProofConfig.arms), choices=ARMS,
                    help="the stages after SFT to run and evaluate (each resumable; rm: the two reward models, not "
                         "an endpoint); e.g. --arms dpa rft runs only those of each seed")
    kept = ap.add_mutually_exclusive_group()
    kept.add_argument("--gate", default=None, metavar="GATE_JSON",
                      help="the arms train and are evaluated only on the families this pilot gate.json passed "
                           "(SFT trains on all); recorded in the results")
    kept.add_argument("--families-kept", nargs="+", default=None, metavar="FAMILY",
                      help="the same selection given by name (default: every family of the task)")
    ap.add_argument("--plan-only", action="store_true",
                    help="print each seed's planned CPU-hours per stage (what is left of it) and exit")
    ap.add_argument("--report-only", action="store_true",
                    help="only the analysis of the listed seeds that finished (WORKDIR/seedN/result.json for these "
                         "arms) and the measured CPU per seed and stage: print them, name the seeds still owed, "
                         "train and sample nothing, write nothing")
    ap.add_argument("--prune-weights", action="store_true",
                    help="only delete the weights of the listed seeds' models that are trained and evaluated "
                         "(HumanEval's problems included; SFT's once every arm is), keeping metrics and samples")
    ap.add_argument("--rescore-humaneval", action="store_true",
                    help="only score again, from their saved texts, the listed seeds' HumanEval samples scored by an "
                         "older scoring or withheld (NO_RESULT), recompute the reports, and save the records to "
                         "--records DIR when given")
    ap.add_argument("--records", default=None, metavar="DIR",
                    help="a folder that outlives this machine (e.g. docs/measurements/...): each seed's records are "
                         "restored from DIR/seedN first and saved there after each stage and each model's evaluation "
                         "(metrics, samples, digests; no weights), so a new machine resumes at the last finished unit")
    ap.add_argument("--save-records", action="store_true",
                    help="only copy the listed seeds' finished units from WORKDIR to --records DIR (a session's last "
                         "step before committing them: units finished by a process still running are kept too)")
    ap.add_argument("--reward-noise", type=int, default=0, metavar="N",
                    help="only measure the Eq. 4 reward of one program N times (1 vs 3 repeats) and exit")
    ap.add_argument("--sft-only", action="store_true",
                    help="only each seed's SFT stage (WORKDIR/seedN/sft, resumable from its checkpoints), then exit: "
                         "the model the pilot gate is pre-registered for (--pilot --pilot-model WORKDIR/seed0/sft)")
    ap.add_argument("--pilot", action="store_true", help="only the pilot gate: sample the held-out prompts at T "
                    f"{ProofConfig.pilot_temperature}, classify in the sandbox, print the per-family gate table")
    ap.add_argument("--pilot-model", default=None, help="the model the pilot samples (default: the profile's base "
                                                        "model; or a run directory, e.g. SFT's)")
    ap.add_argument("--pilot-samples", type=int, default=ProofConfig.pilot_samples_per_prompt,
                    help="samples per prompt, generated in one batch")
    ap.add_argument("--pilot-prompts", type=int, default=None, help="only the first N prompts of the split (one per "
                                                                    "family first, then the second of each)")
    ap.add_argument("--pilot-split", default="heldout", choices=("heldout", "train"),
                    help="the prompts the pilot samples: the held-out ones (the gate) or the training ones (the "
                         "table without a verdict: can the arms reach the fast idiom among k samples?)")
    ap.add_argument("--pilot-temperature", type=float, default=ProofConfig.pilot_temperature,
                    help="the pilot's sampling temperature (the gate is pre-registered at the default; the arms "
                         f"sample at {ProofConfig.temperature})")
    ap.add_argument("--pilot-out", default=None, help="where samples.jsonl and gate.json (table.json for the train "
                                                      "split) go (default: WORKDIR/pilot)")
    args = ap.parse_args()
    from perfalign.sandbox import Sandbox

    workdir = args.workdir or ProofConfig.workdir + ("" if args.profile == "embedded" else f"_{args.profile}") + (
        "" if args.families == DEFAULT_FAMILY_SET else f"_{args.families}")
    from pilot import gate_families

    families = gate_families(args.gate) if args.gate else tuple(args.families_kept or ())
    cfg = ProofConfig(workdir=workdir, profile=args.profile, family_set=args.families, families=families,
                      arms=tuple(args.arms), samples_per_prompt=args.samples_per_prompt,
                      sft_epochs=args.sft_epochs, sft_max_steps=args.sft_max_steps, rlpf_episodes=args.rlpf_episodes,
                      humaneval_problems=args.humaneval_problems, humaneval_samples_per_problem=args.humaneval_samples,
                      pilot_samples_per_prompt=args.pilot_samples, pilot_temperature=args.pilot_temperature)
    if args.pilot_temperature <= 0 or args.pilot_samples < 1:
        raise SystemExit("--pilot-temperature must be > 0 and --pilot-samples >= 1")
    if args.humaneval_samples < 1 or (args.humaneval_problems or 0) < 0:
        raise SystemExit("--humaneval-samples must be >= 1 and --humaneval-problems >= 0")
    w = Path(cfg.workdir)
    t0 = time.time()
    if args.report_only:
        return report_only(w, args.seeds, cfg)
    if args.rescore_humaneval:
        with Sandbox.from_settings(stage_config(cfg, "sandbox"), workers=2) as sb:
            for seed in args.seeds:
                sd = w / f"seed{seed}"
                print(f"seed {seed}: rescored {rescore_humaneval(sd, sb, stage_config(cfg, 'eval').probe)}", flush=True)
                if args.records and sd.is_dir():
                    save_records(sd, Path(args.records) / f"seed{seed}", len(humaneval_ids(cfg)))
        return 0
    if args.prune_weights:
        for seed in args.seeds:
            print(f"seed {seed}: pruned {prune_weights(w / f'seed{seed}', cfg.arms, len(humaneval_ids(cfg)))}")
        return 0
    records = Path(args.records) if args.records else None
    if args.save_records:
        if records is None:
            raise SystemExit("--save-records needs --records DIR")
        for seed in args.seeds:
            if (w / f"seed{seed}").is_dir():
                files = save_records(w / f"seed{seed}", records / f"seed{seed}", len(humaneval_ids(cfg)))
                print(f"seed {seed}: {len(files)} records in {records / f'seed{seed}'}")
        return 0
    pin_profile(w, cfg.profile)
    for seed in args.seeds if records is not None else ():
        (w / f"seed{seed}").mkdir(parents=True, exist_ok=True)
        if copied := restore_records(records / f"seed{seed}", w / f"seed{seed}"):
            print(f"seed {seed}: {len(copied)} records restored from {records / f'seed{seed}'}", flush=True)
    with Sandbox.from_settings(stage_config(cfg, "sandbox"), workers=2) as sb:
        share = cfg.idiom_sft_fast_share if cfg.family_set == "idioms" else None
        task = get_task(w, sb, cfg.family_set, heldout_only=args.pilot and args.pilot_split == "heldout",
                        sft_fast_share=share, records=records)
        if args.pilot:
            return pilot_gate(task, cfg, args.pilot_model, Path(args.pilot_out or w / "pilot"), args.pilot_prompts, sb,
                              args.pilot_split)
        if args.reward_noise:
            print(json.dumps(reward_noise(task, sb, args.reward_noise), indent=1))
            return 0
        if args.plan_only:
            for seed in args.seeds:
                print(plan_line(cfg, task, seed))
            return 0
        if args.sft_only:
            for seed in args.seeds:
                print(json.dumps(run_seed(task, seed, cfg, sb, sft_only=True, records=records), default=str),
                      flush=True)
            return 0
        results = []
        for seed in args.seeds:
            path = w / f"seed{seed}" / "result.json"
            if done := finished_seed(w, seed, cfg):
                results.append(done)  # a finished seed is not run again (delete it to re-run)
                continue
            r = run_seed(task, seed, cfg, sb, records=records)
            path.write_text(json.dumps(r, indent=2, default=str))
            if records is not None:
                save_records(w / f"seed{seed}", records / f"seed{seed}", len(humaneval_ids(cfg)))
            results.append(r)
            shares = {m: v["heldout"]["fast_correct_share"] for m, v in r["samples"].items()}
            print(f"seed {seed}: " + json.dumps(shares) + f" timings {r['timings']}", flush=True)
    summary = summarize(results, cfg.noninferiority_margin)
    summary.update(config=asdict(cfg), total_s=round(time.time() - t0, 1),
                   task={"train": len(task.train), "heldout": len(task.heldout)})
    (w / "proof.json").write_text(json.dumps(summary, indent=2))
    print(format_summary(summary))
    print(f"\nwritten {w / 'proof.json'}; {summary['total_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
