"""What every stage shares: the base Config fields, run directories, device checks, saving."""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import logging
import os
import shutil
import statistics
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from perfalign.common.fileio import atomic_write_json

from .models import on_cpu, use_bf16

log = logging.getLogger("perfalign.alignment")

# Files of a finished run directory (besides the model / tokenizer files of save_pretrained).
STAGE_CONFIG_FILE = "stage_config.json"
METRICS_FILE = "metrics.json"
TRAINER_DIR = "trainer"  # TRL's output_dir in the run directory: the resumable checkpoints
# In each checkpoint: the training's wall and CPU seconds up to it, over every run it resumed from.
COST_FILE = "perfalign_cost.json"
NOTHING_SPENT = {"wall_s": 0.0, "cpu_s": 0.0}  # a fresh start's cost before it
# Fields that may differ between a checkpoint's run and the run resuming from it.
RESUME_IGNORES = ("overwrite", "checkpoint_every_s")


@dataclass
class StageResult:
    run_dir: Path
    metrics: dict[str, Any]


@dataclass
class StageConfig:
    """Fields shared by the stage configs. Defaults are the paper's production settings
    (§VII-C: bf16, one sample per GPU; global batch = per_device * grad_accum * 4 GPUs); other
    profiles are files (config/profiles/*.toml) holding what differs. A field named like a field of
    the stage's TRL config (``trl_config``) is that field: ``trl_args`` passes it on by name, TRL
    checks it, and TRL's help is its doc unless a comment here says more; the default is ours."""

    trl_config: ClassVar[str] = ""           # "module:Class" of the stage's TRL config
    trl_fixed: ClassVar[dict[str, Any]] = {}  # the stage's TRL settings that are not ours to change

    output_dir: str = "runs/stage"           # the run directory (TRL's output_dir is its trainer/ folder)
    data_path: str = "runs/triplets"         # build_triplets output dir (or a Parquet file of its rows)
    seed: int = 42
    num_train_epochs: float = 1.0
    max_steps: int = -1                      # > 0 overrides epochs (smoke runs)
    learning_rate: float = 1.41e-5
    optim: str = "adamw_torch"               # the paper's Adam(W)
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    per_device_eval_batch_size: int = 4
    max_length: int | None = 2048            # prompt + completion tokens (longer ones are truncated/dropped)
    bf16: bool | None = None                 # None: bf16 on a GPU, fp32 on the CPU
    use_cpu: bool | None = None              # None: CPU iff no CUDA device
    activation_checkpointing: bool = True   # transformers 5 name of gradient checkpointing
    logging_steps: int = 10
    # "group_by_length": batches of similar lengths (on the bundled rows half of a random batch is padding)
    train_sampling_strategy: str = "random"
    max_train_samples: int | None = None     # only the first N training rows; None: all
    max_eval_samples: int | None = None      # only the first N evaluation rows; None: all
    overwrite: bool = False                  # refuse to overwrite a finished run directory
    torch_threads: int | None = None         # None: torch's default (on a shared 2-core box 1 is much faster)
    checkpoint_every_s: float = 1800.0       # a resumable checkpoint at most this often, in s (0: none)
    lora_r: int = 0                          # > 0: train LoRA adapters of this rank (peft), merged when saved
    lora_alpha: int = 16                     # LoRA scaling numerator (peft's lora_alpha)
    lora_dropout: float = 0.0                # dropout on the LoRA branch
    lora_target_modules: str = "all-linear"  # peft's target_modules (a module name suffix, or all-linear)
    trl_overrides: dict[str, Any] = field(default_factory=dict)  # passed through to the TRL config

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Configuration errors, raised before any model is loaded: the values, the device, the
        output directory."""
        self.check_values()
        if self.on_cpu and self.bf16:  # asked for (None: off on the CPU)
            raise ValueError(f"{type(self).__name__}: bf16=True needs a GPU; this run is on the CPU "
                             "(use the embedded profile, or bf16=False)")
        out = Path(self.output_dir)
        if (out / METRICS_FILE).exists() and not self.overwrite:
            raise FileExistsError(f"{out} already holds a finished run; pass overwrite=True or a new output_dir")

    def check_values(self) -> None:
        """Ranges and choices of the values alone (checked where a config is loaded)."""
        if not self.learning_rate > 0:
            raise ValueError(f"{type(self).__name__}.learning_rate must be > 0")
        for name in ("per_device_train_batch_size", "gradient_accumulation_steps", "per_device_eval_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{type(self).__name__}.{name} must be >= 1")
        if self.max_steps <= 0 and not self.num_train_epochs > 0:
            raise ValueError(f"{type(self).__name__}: set num_train_epochs > 0 or max_steps > 0")
        if self.max_length is not None and self.max_length < 16:
            raise ValueError(f"{type(self).__name__}.max_length must be >= 16 (or None)")
        if self.checkpoint_every_s < 0:
            raise ValueError(f"{type(self).__name__}.checkpoint_every_s must be >= 0 (0: no checkpoints)")
        if self.lora_r < 0 or self.lora_alpha < 1 or not 0 <= self.lora_dropout < 1:
            raise ValueError(f"{type(self).__name__}: lora_r >= 0 (0: full fine-tuning), lora_alpha >= 1, "
                             "0 <= lora_dropout < 1")

    @property
    def on_cpu(self) -> bool:
        return on_cpu(self.use_cpu)

    @property
    def use_bf16(self) -> bool:
        return use_bf16(self.bf16, self.use_cpu)

    def rows_read(self) -> int | None:
        """Training rows a ``max_steps`` run reads, on every process together (None: epochs, all of them)."""
        if self.max_steps <= 0:
            return None
        from accelerate import PartialState

        return (self.max_steps * self.per_device_train_batch_size * self.gradient_accumulation_steps
                * PartialState().num_processes)

    @classmethod
    def trl_class(cls) -> type:
        module, name = cls.trl_config.split(":")
        with warnings.catch_warnings(action="ignore"):  # trl.experimental warns on import (PPO: rlpf.PINNED_TRL)
            return getattr(importlib.import_module(module), name)

    def trl_args(self, **computed: Any):
        """The stage's TRL config: every field of ours it has, by name, then what every run asks of TRL
        (checkpoints only when ``add_checkpoints`` asks, one kept; no evaluation, reporters, bars),
        ``trl_fixed``, ``computed``, ``trl_overrides``."""
        cls = self.trl_class()
        theirs = {f.name for f in dataclasses.fields(cls) if f.init}
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name in theirs}
        run = {"output_dir": str(Path(self.output_dir) / TRAINER_DIR), "use_cpu": self.on_cpu, "bf16": self.use_bf16,
               "data_seed": self.seed,
               "report_to": "none", "save_strategy": "no", "save_total_limit": 1, "eval_strategy": "no",
               "disable_tqdm": True,
               "dataloader_num_workers": 0}
        return cls(**{**shared, **run, **self.trl_fixed, **computed, **self.trl_overrides})

    @classmethod
    def trl_doc(cls, name: str) -> str | None:
        """The first sentence of TRL's help of a field we share with the stage's TRL config."""
        helps = {f.name: f.metadata.get("help") or "" for f in dataclasses.fields(cls.trl_class())}
        return " ".join(helps.get(name, "").split()).split(". ")[0].rstrip(".") or None

    def peft_config(self, task_type: str = "CAUSAL_LM"):
        """The LoRA config of ``lora_*`` for TRL's ``peft_config`` (None: full fine-tuning).
        A reward/value head (SEQ_CLS) is trained in full beside the adapters (peft's modules_to_save)."""
        if not self.lora_r:
            return None
        from perfalign.common.extras import require

        peft = require("peft", "lora")
        return peft.LoraConfig(r=self.lora_r, lora_alpha=self.lora_alpha, lora_dropout=self.lora_dropout,
                               target_modules=self.lora_target_modules, task_type=task_type)


def quiet_libraries() -> None:
    """Progress bars and info logs of datasets/transformers flood test and flow logs."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TQDM_DISABLE", "1")  # TRL's reference log-prob pass reads it
    import datasets
    import transformers

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()


def prepare_process(cfg: StageConfig) -> None:
    """Quiet logs, thread count and seeds, before any model is built."""
    quiet_libraries()
    if cfg.torch_threads:
        import torch

        torch.set_num_threads(cfg.torch_threads)
    from transformers import set_seed

    set_seed(cfg.seed)


def group_pairs_by_length(trainer, cfg: StageConfig) -> None:
    """``train_sampling_strategy = "group_by_length"`` on a preference trainer (reward model, DPA):
    transformers' samplers (train and eval) measure ``input_ids``, which a tokenized pair (TRL's
    prompt_ids, chosen_ids, rejected_ids) does not have; a length column (prompt + the longer
    answer, what the batch is padded to) stands in, kept through TRL's column filter."""
    name = trainer.args.length_column_name
    if cfg.train_sampling_strategy != "group_by_length":
        return

    def with_lengths(ds):
        if ds is None or name in ds.column_names or "input_ids" in ds.column_names:
            return ds
        answers = [c for c in ("chosen_ids", "rejected_ids") if c in ds.column_names]
        prompt = "prompt_ids" in ds.column_names
        return ds.map(lambda row: {name: (len(row["prompt_ids"]) if prompt else 0)
                                   + max(len(row[c]) for c in answers)})

    trainer.train_dataset = with_lengths(trainer.train_dataset)
    trainer.eval_dataset = with_lengths(trainer.eval_dataset)
    trainer._set_signature_columns_if_needed()  # TRL 1.12 / transformers 5.23 (pinned) private API
    trainer._signature_columns = [*trainer._signature_columns, name]


def report_steps(trainer, stage: str) -> None:
    """Training steps go to common.progress ("align: <stage> steps"), the one progress
    mechanism; and since disable_tqdm=True makes transformers print every log dict to stdout,
    logs stay in trainer.state.log_history only."""
    from transformers.trainer_callback import PrinterCallback, TrainerCallback

    from perfalign.common.progress import report

    seconds: list[float] = []  # wall time of each optimizer step (PPO: rollout + reward + update)

    class StepProgress(TrainerCallback):
        last = 0.0

        def on_train_begin(self, args, state, control, **kwargs):
            self.last = time.perf_counter()
            if state.is_world_process_zero and state.max_steps:  # the bar from the start, not the first step
                report(f"align: {stage} steps", state.global_step, state.max_steps)

        def on_step_end(self, args, state, control, **kwargs):
            now = time.perf_counter()
            seconds.append(now - self.last)
            self.last = now
            if state.is_world_process_zero:
                report(f"align: {stage} steps", state.global_step, state.max_steps or state.global_step)

    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(StepProgress())
    trainer.perfalign_step_seconds = seconds


def step_times(trainer) -> dict[str, float]:
    """The first step's wall time (warm-up included) and the median of the others."""
    s = getattr(trainer, "perfalign_step_seconds", [])
    if not s:
        return {}
    return {"steps": len(s), "first_s": round(s[0], 3), "median_s": round(statistics.median_high(s[1:] or s), 3)}


def config_from_json(cls: type, fields: dict[str, Any]) -> Any:
    """A stage config from its ``dataclasses.asdict`` JSON (what ``alignment.launch`` reads):
    nested dataclasses (the RLPF stage's ``sandbox``) rebuilt, JSON lists back to tuples."""
    import typing

    hints = typing.get_type_hints(cls)
    kw: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in fields:
            continue
        v, hint = fields[f.name], hints[f.name]
        if dataclasses.is_dataclass(hint) and isinstance(v, dict):
            v = config_from_json(hint, v)
        elif isinstance(v, list) and (typing.get_origin(hint) is tuple or isinstance(f.default, tuple)):
            v = tuple(v)
        kw[f.name] = v
    unknown = set(fields) - set(kw) - {"stage"}
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
    return cls(**kw)


def _resume_config(cfg: StageConfig) -> dict:
    fields = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in RESUME_IGNORES}
    return json.loads(json.dumps({"stage": type(cfg).__name__, **fields}, default=str))


def resume_point(cfg: StageConfig) -> str | None:
    """The latest complete checkpoint of an earlier, unfinished run of this very config (None: start
    at step 0). Checkpoints of another config are deleted; this config is recorded beside them."""
    folder = Path(cfg.output_dir) / TRAINER_DIR
    marker = folder / STAGE_CONFIG_FILE
    try:
        same = json.loads(marker.read_text()) == _resume_config(cfg)
    except (OSError, ValueError):
        same = False
    last = last_complete_checkpoint(folder) if same and folder.is_dir() else None
    if last is None:
        drop_checkpoints(cfg)
        atomic_write_json(marker, _resume_config(cfg))
    else:
        log.info("%s: resuming from %s", type(cfg).__name__, last)
    return last


def last_complete_checkpoint(folder: Path) -> str | None:
    """The highest-step ``checkpoint-N`` in ``folder`` that holds its trainer state, which transformers
    (and the RLPF trainer) write last: a save cut by a kill lacks it, and is deleted (the previous
    checkpoint is rotated away only after a save completes, so it is still there)."""
    steps = sorted((int(d.name.rsplit("-", 1)[1]), d) for d in folder.glob("checkpoint-*")
                   if d.is_dir() and d.name.rsplit("-", 1)[1].isdigit())
    for _, d in reversed(steps):
        try:
            json.loads((d / "trainer_state.json").read_text())
            return str(d)
        except (OSError, ValueError):
            pass
        log.warning("%s: a checkpoint cut short (no whole trainer_state.json), deleted", d)
        shutil.rmtree(d, ignore_errors=True)
    return None


def finished_run(cfg: StageConfig) -> StageResult | None:
    """The finished run of this very config in ``cfg.output_dir``, if there is one."""
    out = Path(cfg.output_dir)
    try:
        saved = json.loads((out / STAGE_CONFIG_FILE).read_text())
        metrics = json.loads((out / METRICS_FILE).read_text())
    except (OSError, ValueError):
        return None
    same = {k: v for k, v in saved.items() if k not in RESUME_IGNORES} == _resume_config(cfg)
    return StageResult(out, metrics) if same else None


def drop_checkpoints(cfg: StageConfig) -> None:
    for d in (Path(cfg.output_dir) / TRAINER_DIR).glob("checkpoint-*"):
        shutil.rmtree(d, ignore_errors=True)


def add_checkpoints(trainer, cfg: StageConfig) -> None:
    """Checkpoints (transformers' own: weights, optimizer, scheduler, RNG, trainer state) at the
    end of a step once ``checkpoint_every_s`` has passed since the last one; every process takes
    rank 0's decision (saving is a collective under FSDP). Their cost is in ``trainer.perfalign_checkpoints``."""
    if not cfg.checkpoint_every_s:
        return
    from transformers.trainer_callback import TrainerCallback

    spent = {"checkpoints": 0, "seconds": 0.0}
    # None: resumed from a checkpoint that did not record it, so no later checkpoint can either
    before = getattr(trainer, "perfalign_spent_before", NOTHING_SPENT)

    class TimedCheckpoints(TrainerCallback):
        last = started = began = began_cpu = 0.0

        def on_train_begin(self, args, state, control, **kwargs):
            self.last = self.began = time.perf_counter()
            self.began_cpu = time.process_time()

        def on_step_end(self, args, state, control, **kwargs):
            due = time.perf_counter() - self.last >= cfg.checkpoint_every_s and state.global_step < state.max_steps
            if _rank_zero_says(due):
                control.should_save = True
                self.started = time.perf_counter()

        def on_save(self, args, state, control, **kwargs):
            now = time.perf_counter()
            spent["checkpoints"] += 1
            spent["seconds"] = round(spent["seconds"] + now - self.started, 3)
            self.last = now
            ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if before is not None and state.is_world_process_zero and ckpt.is_dir():  # the work it keeps
                atomic_write_json(ckpt / COST_FILE, {
                    "wall_s": round(before["wall_s"] + now - self.began, 1),
                    "cpu_s": round(before["cpu_s"] + time.process_time() - self.began_cpu, 1)})

    trainer.add_callback(TimedCheckpoints())
    trainer.perfalign_checkpoints = spent


def train_resumable(trainer, cfg: StageConfig, **train_kwargs):
    """``trainer.train`` with checkpoints, continued from the last checkpoint of an unfinished run
    of the same config (``trainer.perfalign_resumed_from``: its step, 0 for a fresh start;
    ``trainer.perfalign_spent_before``: the wall and CPU seconds (rank 0's process) the runs before
    spent up to that checkpoint, ``None`` when its checkpoint did not record them)."""
    ckpt = resume_point(cfg)
    trainer.perfalign_resumed_from = int(ckpt.rsplit("-", 1)[1]) if ckpt else 0
    trainer.perfalign_spent_before = spent_up_to(ckpt) if ckpt else dict(NOTHING_SPENT)
    add_checkpoints(trainer, cfg)
    return trainer.train(resume_from_checkpoint=ckpt, **train_kwargs)


def spent_up_to(ckpt: str) -> dict[str, float] | None:
    """The wall and CPU seconds a checkpoint's training had spent (its ``COST_FILE``), or None."""
    try:
        cost = json.loads((Path(ckpt) / COST_FILE).read_text())
        return {"wall_s": float(cost["wall_s"]), "cpu_s": float(cost["cpu_s"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _rank_zero_says(flag: bool) -> bool:
    import torch

    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
        return flag
    box = [flag]
    dist.broadcast_object_list(box, src=0)
    return bool(box[0])


def save_stage(cfg: StageConfig, trainer, tokenizer, metrics: dict[str, Any], started: float) -> StageResult:
    """Save model (through the trainer: gathers FSDP shards; PPO keeps only the policy),
    tokenizer, the stage config and the metrics JSON into the run directory."""
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not save_merged_adapters(trainer, out):
        trainer.save_model(str(out))
    if not trainer.accelerator.is_main_process:
        return StageResult(out, metrics)
    tokenizer.save_pretrained(out)
    (out / STAGE_CONFIG_FILE).write_text(json.dumps({"stage": type(cfg).__name__, **dataclasses.asdict(cfg)}, indent=2,
                                                    default=str))
    acc = trainer.accelerator
    metrics = {**metrics, "runtime_s": round(time.time() - started, 2), "step_seconds": step_times(trainer),
               "checkpointing": getattr(trainer, "perfalign_checkpoints", None),
               "resumed_from_step": getattr(trainer, "perfalign_resumed_from", 0),
               # the runs before the resume, up to its checkpoint (runtime_s is this run's only)
               "spent_before_resume": getattr(trainer, "perfalign_spent_before", None),
               "launch": {"distributed_type": str(acc.distributed_type).rsplit(".", 1)[-1],
                          "num_processes": acc.num_processes, "device": str(acc.device),
                          "backend": getattr(acc.state, "backend", None)}}
    (out / METRICS_FILE).write_text(json.dumps(metrics, indent=2, sort_keys=True, default=float))
    drop_checkpoints(cfg)  # finished: nothing to resume
    log.info("%s -> %s: %s", type(cfg).__name__, out, metrics)
    return StageResult(out, metrics)


def save_merged_adapters(trainer, out: Path) -> bool:
    """A LoRA-trained model (a peft model; under PPO, the policy) saved with its adapters merged:
    a plain model directory the next stage and evaluation load like any other. False if not LoRA."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    model = getattr(model, "policy", model)  # PPO's policy + value wrapper: the policy only
    if not hasattr(model, "merge_and_unload"):
        return False
    if trainer.accelerator.num_processes > 1:
        raise NotImplementedError("saving LoRA adapters merged is implemented for one process only")
    model.merge_and_unload().save_pretrained(str(out))
    return True


def last_logged(log_history: list[dict], prefix: str = "") -> dict[str, float]:
    """The last value of each numeric key the trainer logged (keys containing ``prefix``)."""
    out: dict[str, float] = {}
    for entry in log_history:
        for k, v in entry.items():
            if isinstance(v, (int, float)) and prefix in k:
                out[k] = float(v)
    return out


def no_grad(fn):
    """``torch.no_grad()`` as a decorator that imports torch at the first call, so that a module
    holding a stage's config dataclass imports without torch (``perfalign config``, ``--help``)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import torch

        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper
