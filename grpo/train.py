"""Online GRPO with real-machine rewards (arXiv 2602.12049) through TRL's ``GRPOTrainer``.

One run = one arm (``grpo``: plain GRPO, every technique permitted; ``sqd``: GRPO under a stage
schedule with a QD archive; ``control``: the same pipeline with learning rate 0, i.e. no RL) for
one seed. Per stage a GRPOTrainer is built on the same model (weights carry over, the optimizer
restarts: a design choice so each stage's prompts can carry the archive's current elites); the
dataset's ``task``/``stage``/``permitted`` columns reach the reward function as keyword arguments.
Rewards come from the Dask benchmark workers; every rollout is written to Parquet.

Embedded profile (spec mode): the tiny local Llama is first taught the spec *format* on random
specs (a short supervised warm-up with TRL's SFTTrainer: a stand-in for a pre-trained coder's
knowledge of C; no performance information), then GRPO has to find fast specs from rewards.
"""
from __future__ import annotations

import copy
import hashlib
import logging
import random
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perfalign.alignment.models import load_causal_lm, load_tokenizer, on_cpu, resolve_model, use_bf16
from perfalign.common.outcomes import withheld_share
from perfalign.common.progress import report as report_progress
from perfalign.sandbox import SandboxSettings

from .measure import MeasureSettings, Rollout, static_verdict
from .prompts import code_prompt, spec_prompt
from .records import RolloutWriter, write_archive, write_json
from .reward import GrpoRewardTiers
from .spec_family import compliant_spec, random_spec
from .sqd import DEFAULT_SQD_SCHEDULE, PLAIN_SCHEDULE, QDArchive, Stage, parse_schedule
from .tasks import GrpoTask, load_tasks

log = logging.getLogger("perfalign.grpo")
# what a cached measurement gives a later rollout of the same program
_MEASURED = ("tier", "reward", "gflops", "peak_gflops", "peak_fraction", "naive_gflops", "speedup_vs_naive", "verdict",
             "message", "flags", "worker_pid", "worker_cpus", "measure_s", "blas", "withheld", "cause", "techniques",
             "niche", "code_sha", "flops")


@dataclass
class GrpoRunConfig:
    """One GRPO run. Defaults: production, as every table's (a 14B coder writes free C for DGEMM
    and PolyBench kernels on a GPU); the embedded profile (config/profiles/embedded.toml [grpo]) holds
    the tiny run: the tiny local model, the controlled spec family, DGEMM n=256 on the CPU."""

    out_dir: str
    arm: str = "sqd"                       # "sqd" | "grpo" | "control"
    seed: int = 0
    problem_size: str = "full"             # full (DGEMM n=1024, PolyBench LARGE) or reduced (n=256, MEDIUM)
    tasks: tuple[str, ...] = ("dgemm", "2mm", "syrk", "jacobi-2d")  # dgemm and/or the PolyBench kernels
    mode: str = "code"                     # "spec" (controlled family) | "code" (free C)
    model: str = "Qwen/Qwen2.5-Coder-14B-Instruct"  # embedded (the tiny local model), a registry name, Hub id or path
    schedule: str = DEFAULT_SQD_SCHEDULE   # SQD stages, ';'-separated, techniques '+'-joined, ':N' steps (sqd)
    steps_per_stage: int = 50              # GRPO steps of an SQD stage whose schedule entry gives no count
    steps: int | None = None               # plain GRPO / control: total steps (default: as many as SQD's)
    num_generations: int = 8               # completions per prompt: the GRPO group
    prompts_per_step: int = 2              # prompts per task per step (batch: num_generations x this)
    learning_rate: float = 1e-6            # GRPO learning rate (arm control: 0, no update)
    beta: float = 0.04                     # KL coefficient of GRPO (TRL's beta; 0: no KL term)
    temperature: float = 0.8               # sampling temperature of the rollouts
    max_completion_length: int = 2048      # tokens per completion at most
    warmup_steps: int = 0                  # spec-format warm-up (SFT) of the tiny model
    warmup_lr: float = 2e-3                # learning rate of the warm-up
    warmup_prior: str = "uniform"          # warm-up targets: uniform, compliant or narrow (WARMUP_PRIORS)
    init_model_dir: str | None = None      # start from this model (e.g. a shared warm-up)
    elite_seeds: int = 2                   # archive elites the stage permits shown in each prompt (SQD seeds)
    n_workers: int = 2                     # local Dask benchmark workers, one program each (unused with dask_address)
    cpus_per_worker: int = 8               # cores pinned to each benchmark worker (the tasks' thread count)
    dask_address: str | None = None        # a running Dask scheduler; None: a LocalCluster of n_workers
    polybench_dir: str | None = None       # a PolyBench/C 4.2.1 checkout (needed by the PolyBench tasks)
    reuse_measurements: bool = True        # one measurement per distinct program per run
    tiers: GrpoRewardTiers = field(default_factory=GrpoRewardTiers)
    measure: MeasureSettings = field(default_factory=MeasureSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # the run's [sandbox] (workers: one slot each)
    bf16: bool | None = None               # bf16 weights and training; None: on a GPU, not on the CPU
    use_cpu: bool | None = None            # train on the CPU even where a GPU is present; None: CPU iff no CUDA device
    torch_threads: int | None = None       # CPU threads of training; None: torch's default

    def stages(self) -> list[Stage]:
        if self.arm == "sqd":
            return parse_schedule(self.schedule, self.steps_per_stage)
        total = self.steps or sum(s.steps for s in parse_schedule(self.schedule, self.steps_per_stage))
        return parse_schedule(f"{PLAIN_SCHEDULE}:{total}", total)


def _timed_trainer_class():
    from trl import GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        """GRPOTrainer that records the generation time of every batch (beside the reward
        latency the reward function records)."""

        generation_seconds: list

        def _generate(self, prompts):
            t0 = time.perf_counter()
            try:
                return super()._generate(prompts)
            finally:
                self.generation_seconds.append(time.perf_counter() - t0)

        def record_metric(self, key: str, value: float | None) -> None:
            """A metric of this step logged beside TRL's own (TRL averages and logs it each step)."""
            self._metrics["train"][key].append(float("nan") if value is None else float(value))

    return TimedGRPOTrainer


# Warm-up priors: the probability that a target spec uses each technique the prompt permits
# (None: uniformly random specs, the stage ignored). "compliant" is an instruction-following
# prior; "narrow" a conservative one that rarely optimizes (p = 0.15: about half of its programs
# are plain loops), the collapsed start under which staged exploration (SQD) should matter.
WARMUP_PRIORS = {"uniform": None, "compliant": 0.5, "narrow": 0.15}


def check_warmup_prior(prior: str) -> float | None:
    if prior not in WARMUP_PRIORS:
        raise ValueError(f"warmup_prior must be one of {sorted(WARMUP_PRIORS)}, not {prior!r}")
    return WARMUP_PRIORS[prior]


def format_warmup(model, tokenizer, tasks: dict[str, GrpoTask], cfg: GrpoRunConfig, batch_size: int = 16):
    """Teach the tiny model the spec format on ``cfg.warmup_steps`` batches of random specs drawn from
    ``cfg.warmup_prior`` (WARMUP_PRIORS): next-token loss on the completion tokens only, AdamW (a plain
    supervised loop: TRL's SFTTrainer measured ~1.6 s per step here against ~0.05 s for this loop, for
    the same loss). The specs carry no performance information."""
    import torch

    p_use = check_warmup_prior(cfg.warmup_prior)
    stages, steps = parse_schedule(DEFAULT_SQD_SCHEDULE, 1), cfg.warmup_steps
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.warmup_lr, weight_decay=0.0)
    names, losses = list(tasks), []
    eos = tokenizer.eos_token or ""
    for step in range(steps):
        prompts, targets = [], []
        for _ in range(batch_size):
            task, stage = tasks[rng.choice(names)], rng.choice(stages)
            # prompts as GRPO will show them, elites included (random specs and numbers: no signal)
            elites = [("", rng.uniform(0.5, 20), random_spec(rng).text()) for _ in range(rng.randint(0, 2))]
            prompts.append(spec_prompt(task, stage, None, elites=elites))
            target = random_spec(rng) if p_use is None else compliant_spec(rng, stage.permitted, p_use)
            targets.append(" " + target.text() + eos)
        ids, labels = [], []
        for p, t in zip(prompts, targets):
            pi = tokenizer(p, add_special_tokens=False)["input_ids"]
            ti = tokenizer(t, add_special_tokens=False)["input_ids"]
            ids.append(pi + ti)
            labels.append([-100] * len(pi) + ti)
        width = max(map(len, ids))
        pad = tokenizer.pad_token_id
        x = torch.tensor([[pad] * (width - len(r)) + r for r in ids])
        y = torch.tensor([[-100] * (width - len(r)) + r for r in labels])
        att = (torch.arange(width)[None, :] >= torch.tensor([width - len(r) for r in ids])[:, None]).long()
        loss = model(input_ids=x, attention_mask=att, labels=y).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return model, losses[:: max(1, steps // 10)] + losses[-1:]


def _load(cfg: GrpoRunConfig, model_path: str):
    """(tasks, tokenizer, model) of ``cfg``, after its thread count and seed are set."""
    import torch
    from transformers import set_seed

    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    set_seed(cfg.seed)
    tasks = load_tasks(cfg.tasks, cfg.problem_size, cfg.cpus_per_worker, cfg.polybench_dir)
    tokenizer = load_tokenizer(model_path, padding_side="left")
    return tasks, tokenizer, load_causal_lm(model_path, bf16=use_bf16(cfg.bf16, cfg.use_cpu), tokenizer=tokenizer)


def warm_start(cfg: GrpoRunConfig, out_dir: str | Path) -> str:
    """Build the spec-format warm-up of ``cfg``'s model once and save it (shared by the arms of
    a seed, so GRPO, SQD and the control start from the same weights)."""
    out = Path(out_dir)
    if (out / "config.json").exists():
        return str(out)
    check_warmup_prior(cfg.warmup_prior)
    tasks, tokenizer, model = _load(cfg, resolve_model(cfg.model))
    model, losses = format_warmup(model, tokenizer, tasks, cfg)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_json({"warmup_losses": losses, "steps": cfg.warmup_steps, "seed": cfg.seed}, out / "warmup.json")
    return str(out)


class _StepRewards:
    """GRPO's reward function, called once a step with the step's completions: measures each new
    program on the cluster (a program's measurement reused within the run when
    ``cfg.reuse_measurements``), offers the correct ones to their task's QD archive, writes every
    rollout and logs the step. One instance serves every stage; ``stage`` and ``trainer`` follow
    the stage being trained."""

    __name__ = "reward_fn"  # TRL names the reward's logged metrics after it

    def __init__(self, cfg: GrpoRunConfig, tasks: dict, cluster, archives: dict, writer, total_steps: int,
                 progress=None):
        self.cfg, self.tasks, self.cluster, self.archives, self.writer = cfg, tasks, cluster, archives, writer
        self.total_steps, self.progress = total_steps, progress
        self.step = 0                                 # GRPO steps so far, over the stages
        self.cache: dict[tuple[str, str], dict] = {}  # (task, code's sha256) -> its measurement
        self.steps_log: list[dict] = []
        self.latencies: list[float] = []
        self.stage: Stage | None = None
        self.trainer = None  # the stage's trainer, once built (its log carries the withheld share)

    def __call__(self, prompts, completions, task, stage_name, permitted, **_):
        cfg, t0 = self.cfg, time.perf_counter()
        self.step += 1
        step = self.step
        rollouts, keys, records, todo = [], [], [None] * len(completions), []
        stage_of = stage_name[0] if stage_name else self.stage.name
        for k, (comp, tname, perm, sname) in enumerate(zip(completions, task, permitted, stage_name)):
            text = comp if isinstance(comp, str) else comp[-1]["content"]
            rid = hashlib.sha256(f"{cfg.arm}|{cfg.seed}|{step}|{k}".encode()).hexdigest()[:16]
            r = Rollout(rid, tname, text, tuple(p for p in perm.split("+") if p), sname, step, cfg.mode,
                        cfg.arm, cfg.seed)
            rollouts.append(r)
            tier, _, code, _ = static_verdict(r)
            key = (tname, hashlib.sha256(code.encode()).hexdigest())
            keys.append(key)
            if tier is None and cfg.reuse_measurements and key in self.cache:
                records[k] = {**asdict(r), "permitted": list(r.permitted), "cached": True, "attempts": 0,
                              **{f: copy.deepcopy(self.cache[key].get(f)) for f in _MEASURED}}
            else:
                todo.append(k)
        fresh = self.cluster.evaluate([rollouts[k] for k in todo], self.tasks) if todo else []
        for k, rec in zip(todo, fresh):
            rec["cached"] = False
            records[k] = rec
            # a lost worker's penalty is judged again on the next sample of the same code
            if rec.get("tier") not in (None, "format", "library", "infrastructure") and cfg.reuse_measurements \
                    and rec.get("cause") not in ("worker_lost", "measurement_raised"):
                self.cache[keys[k]] = rec
        for rec in records:
            if rec.get("tier") == "ok":
                self.archives[rec["task"]].offer(rec["niche"], rec.get("gflops"), rec["completion"].strip(), step,
                                                 rec["stage"])
        self.writer.write(records)
        latency = time.perf_counter() - t0
        self.latencies.append(latency)
        self.steps_log.append(self._step_row(step, stage_of, records, len(todo), latency))
        if self.trainer is not None:
            self.trainer.record_metric("withheld_share", self.steps_log[-1]["withheld_share"])
        report_progress(f"grpo {cfg.arm} seed {cfg.seed}: steps", step, self.total_steps)
        if self.progress:
            self.progress(self.steps_log[-1])
        return [r.get("reward") for r in records]

    def _step_row(self, step: int, stage_of: str, records: list[dict], measured: int, latency: float) -> dict:
        ok = [r["gflops"] for r in records if r.get("tier") == "ok" and r.get("gflops") is not None]
        rewards = [r["reward"] for r in records if r.get("reward") is not None]
        withheld = [r for r in records if r.get("reward") is None]  # what TRL skips
        return {
            "step": step, "stage": stage_of, "mean_reward": statistics.fmean(rewards) if rewards else None,
            "mean_gflops_ok": statistics.fmean(ok) if ok else None, "best_gflops": max(ok) if ok else None,
            # failures count 0 GFLOPS: the expected performance of a sample
            "mean_gflops_all": sum(ok) / len(records),
            "ok_fraction": len(ok) / len(records), "tiers": dict(Counter(r.get("tier") for r in records)),
            "reward_latency_s": latency, "measured": measured, "rollouts": len(records),
            "withheld_share": withheld_share(len(withheld), len(records)),
            "withheld_causes": dict(Counter(r.get("cause") or "unknown" for r in withheld)),
            "niches_filled": {n: a.niches_filled for n, a in self.archives.items()}}


def run_grpo(cfg: GrpoRunConfig, cluster=None, progress=None) -> dict:
    """One arm x seed end to end; returns the summary (also written to ``out_dir/summary.json``).
    ``cluster``: a started ``workers.BenchmarkCluster`` to share (else one is started here)."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from .workers import BenchmarkCluster

    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stages = cfg.stages()
    tasks, tokenizer, model = _load(cfg, cfg.init_model_dir or resolve_model(cfg.model))
    if cfg.mode == "spec" and set(tasks) != {"dgemm"}:
        raise ValueError("the controlled spec family expands DGEMM only; use mode='code' for other tasks")
    warm_losses: list[float] = []
    if cfg.mode == "spec" and cfg.warmup_steps and not cfg.init_model_dir:
        model, warm_losses = format_warmup(model, tokenizer, tasks, cfg)
    archives = {name: QDArchive(name) for name in tasks}
    gen_seconds: list[float] = []
    own_cluster = cluster is None
    if own_cluster:
        cluster = BenchmarkCluster(cfg.n_workers, cfg.cpus_per_worker, cfg.dask_address, cfg.measure, cfg.tiers,
                                   sandbox=cfg.sandbox).start()
    rewards = _StepRewards(cfg, tasks, cluster, archives, RolloutWriter(out), sum(st.steps for st in stages),
                           progress)
    TimedGRPOTrainer = _timed_trainer_class()
    try:
        for stage in stages:
            rewards.stage, rewards.trainer = stage, None
            write_prompt = spec_prompt if cfg.mode == "spec" else code_prompt
            rows = [{"prompt": write_prompt(t, stage, archives[name], cfg.elite_seeds), "task": name,
                     "stage_name": stage.name, "permitted": "+".join(sorted(stage.permitted))}
                    for _ in range(stage.steps * cfg.prompts_per_step) for name, t in tasks.items()]
            args = GRPOConfig(
                output_dir=str(out / "trainer"), max_steps=stage.steps,
                per_device_train_batch_size=cfg.num_generations * cfg.prompts_per_step,
                num_generations=cfg.num_generations, max_completion_length=cfg.max_completion_length,
                learning_rate=0.0 if cfg.arm == "control" else cfg.learning_rate, beta=cfg.beta,
                temperature=cfg.temperature, logging_steps=1, save_strategy="no", report_to="none",
                use_cpu=on_cpu(cfg.use_cpu), bf16=use_bf16(cfg.bf16, cfg.use_cpu), seed=cfg.seed,
                gradient_checkpointing=False,
                shuffle_dataset=False, disable_tqdm=True, lr_scheduler_type="constant")
            trainer = TimedGRPOTrainer(model=model, reward_funcs=[rewards], args=args,
                                       train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
            trainer.generation_seconds = []
            rewards.trainer = trainer
            trainer.train()
            gen_seconds += trainer.generation_seconds
            model = trainer.model
    finally:
        if own_cluster:
            cluster.close()
    steps_log = rewards.steps_log
    write_archive([row for a in archives.values() for row in a.rows()], out)
    summary = {
        "config": {k: v for k, v in asdict(cfg).items() if k not in ("tiers", "measure")},
        "tiers": asdict(cfg.tiers), "measure": asdict(cfg.measure), "stages": [
            {"name": s.name, "permitted": sorted(s.permitted), "steps": s.steps} for s in stages],
        "warmup_losses": warm_losses, "steps": steps_log,
        "niches_filled": {n: a.niches_filled for n, a in archives.items()},
        "best_per_niche": {n: {k: round(e.gflops, 3) for k, e in a.elites.items()} for n, a in archives.items()},
        "reward_latency_s": rewards.latencies, "generation_s": gen_seconds,
        "withheld_share": withheld_share(sum(sum(s["withheld_causes"].values()) for s in steps_log),
                                         sum(s["rollouts"] for s in steps_log)),
        "resubmitted": cluster.resubmitted if cluster else 0, "torch_threads": torch.get_num_threads(),
    }
    write_json(summary, out / "summary.json")
    return summary
