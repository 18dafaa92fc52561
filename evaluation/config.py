"""Configuration of an evaluation run: which models, which tasks, how to sample and measure.

Defaults are the paper's (§VII-D: 20 samples per prompt, temperature 0.2, top-p 0.95, runtimes
over 5 runs, OpenMP on 8 threads); the embedded profile that evaluates the tiny local models on
2 CPU cores in a few minutes is a file (config/profiles/embedded.toml, its [eval] table).
"""
from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfalign.common.paths import BUNDLED_DATA
from perfalign.measure.harness import PROBLEM_SIZES, ProbeSettings

DEFAULT_PAREVAL_DIR = BUNDLED_DATA / "pareval_sample"  # the bundled samples; validate() names pareval_dir when missing
DEFAULT_POLYBENCH_DIR = BUNDLED_DATA / "polybench_sample"

# The task groups EvalConfig.tasks chooses from (tasks.registry.TASKS, in its order): those run by default,
# then those run only when named (controlled: perfdata.controlled's held-out prompts; kernelbench: needs a
# checkout and torch usable in the sandbox; humaneval: each sample costs a few sandbox runs).
TASK_GROUPS = ("codecontests", "pareval", "polybench")
OPTIONAL_TASK_GROUPS = ("controlled", "kernelbench", "humaneval")
ORACLE_PREFIX = "oracle:"
ORACLE_MODES = ("reference", "slow", "fast")


@dataclass(frozen=True)
class ModelSpec:
    """A model to evaluate: a report label and a reference — a Hugging Face name, a local model
    directory (e.g. a stage's run directory), ``embedded`` (the tiny local model), or
    ``oracle:reference|slow|fast`` (a pseudo-model returning known solutions, for checks)."""

    label: str
    ref: str

    @property
    def is_oracle(self) -> bool:
        return self.ref.startswith(ORACLE_PREFIX)

    @property
    def oracle_mode(self) -> str:
        return self.ref[len(ORACLE_PREFIX):]

    @classmethod
    def parse(cls, text: str) -> "ModelSpec":
        """``LABEL=REF`` or just ``REF`` (the label is then the reference)."""
        label, sep, ref = text.partition("=")
        return cls(label.strip(), ref.strip()) if sep else cls(text.strip(), text.strip())


@dataclass
class EvalConfig:
    models: list[ModelSpec] = field(default_factory=list)
    tasks: tuple[str, ...] = TASK_GROUPS     # task groups: codecontests, pareval, polybench, controlled, kernelbench
    codecontests_dir: str | None = None      # a CodeContests-Perf folder (perfdata.perf.build output)
    controlled_dir: str | None = None        # task "controlled": a perfdata.controlled task folder
    kernelbench_dir: str | None = None       # task "kernelbench": a KernelBench checkout's KernelBench/ folder
    kernelbench_levels: tuple[int, ...] = (1,)  # task "kernelbench": which KernelBench levels to run
    pareval_dir: str = str(DEFAULT_PAREVAL_DIR)      # a ParEval checkout (default: the bundled sample)
    polybench_dir: str = str(DEFAULT_POLYBENCH_DIR)  # a PolyBench/C 4.2.1 checkout (default: the bundled sample)
    contest_language: str = "cpp"            # language the contest prompts ask for
    pareval_models: tuple[str, ...] = ("serial", "omp", "mpi")  # ParEval execution models run: serial, omp, mpi
    max_prompts_per_task: int | None = None  # prompts per task; None: all (paper: 100 contests, all ParEval/PolyBench)
    # generation (§VII-D)
    num_samples: int = 20                    # samples per prompt
    temperature: float = 0.2                 # sampling temperature (paper §VII-D); 0: greedy
    top_p: float = 0.95                      # nucleus sampling top-p (paper §VII-D)
    max_new_tokens: int = 1024               # generated tokens per sample at most
    batch_size: int = 8                      # sequences per generate() call
    seed: int = 0                            # torch seed set before sampling each model
    bf16: bool | None = None                 # None: bf16 on a GPU, fp32 on the CPU
    torch_threads: int | None = None         # torch CPU threads for generation; None: torch's default
    parallel_models: int = 1                 # models generating at once, each in a process of its own (CPU)
    accept_unfenced: bool = True             # a response without a ``` block is taken as code as is
    # execution
    problem_size: str = "full"               # problem sizes of the real suites: full (the suites' own) or reduced
    controls: bool = True                    # score the reference and a known-slow oracle beside the models
    omp_threads: int = 8                     # OpenMP threads of ParEval/PolyBench OpenMP runs (paper: 8 cores)
    mpi_ranks: int = 2                       # ParEval MPI ranks (mpirun -np inside the sandbox)
    polybench_openmp: bool = False           # compile PolyBench candidates with -fopenmp (then wall time)
    # [eval.probe]: how every program is measured (its clock: probes and contest runs alike); 5 timed
    # rounds of a probe session or a contest pair (measure/contest.py), the paper's 5 runs
    probe: ProbeSettings = field(default_factory=lambda: ProbeSettings(repeats=5))
    ks: tuple[int, ...] = (1,)               # k values of pass@k and speedup_n@k

    def __post_init__(self) -> None:
        # CLI-friendly: models as "LABEL=REF" strings, sequences as lists
        self.models = [m if isinstance(m, ModelSpec) else ModelSpec.parse(str(m)) for m in self.models]
        self.tasks, self.pareval_models, self.ks = tuple(self.tasks), tuple(self.pareval_models), tuple(self.ks)
        self.kernelbench_levels = tuple(self.kernelbench_levels)

    def check_values(self) -> None:
        """Ranges and choices of the values alone (checked where a config is loaded)."""
        if self.parallel_models < 1:
            raise ValueError(f"parallel_models must be >= 1, not {self.parallel_models}")
        unknown = set(self.tasks) - set(TASK_GROUPS + OPTIONAL_TASK_GROUPS)
        if unknown or not self.tasks:
            raise ValueError(f"unknown or no tasks {sorted(unknown) or list(self.tasks)}; "
                             f"choose from {TASK_GROUPS + OPTIONAL_TASK_GROUPS}")
        if not self.kernelbench_levels or any(not isinstance(v, int) or v < 1 for v in self.kernelbench_levels):
            raise ValueError(f"kernelbench_levels must be levels >= 1, got {self.kernelbench_levels}")
        bad_models = set(self.pareval_models) - {"serial", "omp", "mpi"}
        if bad_models:
            raise ValueError(f"unknown ParEval execution models {sorted(bad_models)}; use serial, omp, mpi")
        if self.problem_size not in PROBLEM_SIZES:
            raise ValueError(f"EvalConfig.problem_size must be one of {PROBLEM_SIZES}, got {self.problem_size!r}")
        for name in ("num_samples", "max_new_tokens", "batch_size", "omp_threads", "mpi_ranks"):
            if getattr(self, name) < 1:
                raise ValueError(f"EvalConfig.{name} must be >= 1")
        self.probe.check_values()
        if self.max_prompts_per_task is not None and self.max_prompts_per_task < 1:
            raise ValueError("EvalConfig.max_prompts_per_task must be >= 1 (or None for all)")
        if not self.ks or any(not 1 <= k <= self.num_samples for k in self.ks):
            raise ValueError(f"every k in ks={self.ks} must be in [1, num_samples={self.num_samples}]")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError("temperature must be >= 0 and top_p in (0, 1]")

    def validate(self) -> None:
        """Configuration errors, raised before any model is loaded or program run."""
        self.check_values()
        if not self.models:
            raise ValueError("EvalConfig.models is empty: give at least one model (LABEL=REF)")
        labels = [m.label for m in self.models]
        if len(set(labels)) != len(labels):
            raise ValueError(f"model labels must be unique, got {labels}")
        for m in self.models:
            if m.is_oracle:
                if m.oracle_mode not in ORACLE_MODES:
                    raise ValueError(f"{m.label}: unknown oracle mode {m.oracle_mode!r}; use one of {ORACLE_MODES}")
            else:
                from perfalign.alignment.models import check_model_reference

                check_model_reference(m.ref, f"model {m.label!r}")  # FileNotFoundError for a bad path
        if "codecontests" in self.tasks:
            if not self.codecontests_dir:
                raise ValueError("the codecontests task needs codecontests_dir (a CodeContests-Perf folder); "
                                 "build one with `perfalign perf build` or leave 'codecontests' out of tasks")
            if not Path(self.codecontests_dir).is_dir():
                raise FileNotFoundError(f"codecontests_dir {self.codecontests_dir} does not exist")
        # no folder at all: the kernelbench loader skips the group with the reason
        if "kernelbench" in self.tasks and self.kernelbench_dir and not Path(self.kernelbench_dir).is_dir():
            raise FileNotFoundError(f"kernelbench_dir {self.kernelbench_dir} does not exist (give a KernelBench "
                                    "checkout's KernelBench/ folder, the one holding level1/)")
        for name, on in (("pareval_dir", "pareval"), ("polybench_dir", "polybench")):
            if on in self.tasks and not Path(getattr(self, name)).is_dir():
                raise FileNotFoundError(f"{name} {getattr(self, name)} does not exist")
        if shutil.which("g++") is None and ({"pareval", "polybench"} & set(self.tasks)):
            raise RuntimeError("g++ is not installed: the ParEval and PolyBench drivers are C++")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # the models too, as {label, ref}
