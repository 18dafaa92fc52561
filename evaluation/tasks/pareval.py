"""The ``pareval`` task (paper §VI-A, code generation): ParEval's problems in serial, OpenMP and
MPI. ``pareval_dir`` is one of two sources, read by the one ``ParEvalTask.load``: a ParEval
checkout or the bundled ParEval-style sample (data/pareval_sample, the default). Both are probe
problems scored by the one path, the probe harness (measure/, evaluation/probe_sessions.py); only
their constructors differ (the sample is not in ParEval's layout: tasks/bundled.py says why).

The checkout. ParEval (parallelcodefoundry/ParEval) loaded from a user's checkout: its 60 problems with its
prompts (``prompts/generation-prompts.json``), ``baseline.hpp`` and ``cpu.cc`` drivers, in serial,
OpenMP and MPI. Nothing of ParEval is copied into this repository: the files are read from
``--pareval-dir`` at run time and assembled into sandbox jobs.

How a ParEval problem becomes a probe (measure/probe_cpp.py has the protocol):

- driver TU = ParEval's ``utilities.hpp`` + the prompt's types and the function's *declaration*
  (where ParEval includes ``generated-code.hpp``) + an observer that fingerprints every call +
  ``baseline.hpp`` + ``cpu.cc`` + our ``main``. ``rand()`` is redirected to a PRNG seeded per
  call from the run's secret seed. Mode V runs ParEval's own ``validate()`` (its trials at its
  TEST_SIZE, every candidate call fingerprinted too); mode T runs ParEval's timing loop at the
  problem size, ``init()`` once and ``reset()`` (fresh secret inputs) before every later call.
  Problems ParEval's own harness cannot validate its baseline on are reported unusable, with
  the reason (48_sparse_la_sparse_axpy: its validate() clears the output vector the baseline
  then indexes, and utilities.hpp's assert aborts).
- candidate TU = the headers ParEval's drivers include before the generated code, the prompt's
  types and the candidate's function. No driver macro, clock or validator is in its scope.
- reference = ParEval's baseline behind the prompt's signature (the function ``validate()``
  computes the correct result with, which is ``best()``'s except in 07_fft_fft_conjugate);
  slow = the same run twice on the same memory, its outputs restored in between.

Sizes: production uses ParEval's ``problem-sizes.json``; the embedded profile divides each by
``EMBEDDED_SIZE_DIVISOR`` (documented in the README). Compiler flags are ParEval's (``-std=c++17
-O3``, ``-fopenmp`` for OpenMP, Open MPI's wrapper flags for MPI).

The bundled sample. Each problem directory holds ``task.json`` (function, signature, description, example, the
execution models it has, optionally its tolerance), ``baseline.cpp`` (the sequential baseline: the
reference of speed and of correctness), ``driver.cpp`` (bundled.py) and optionally
``fast_<model>.cpp`` (a known faster solution, used by the oracle). One prompt per (problem,
execution model), in ParEval's form: a commented function header the model completes, wrapped in
the Listing 1 instruction, as for a checkout's problems.

Serial prompts are compiled without OpenMP and timed by CPU time; OpenMP prompts with
``-fopenmp`` and ``OMP_NUM_THREADS=omp_threads``, timed by wall time (CPU time sums threads).
The baseline of both is the sequential implementation. MPI prompts of the bundled sample are
listed but skipped (its drivers have no MPI harness).
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from perfalign.common.prompts import instruction_prompt
from perfalign.measure import probe_cpp
from perfalign.measure.cxxsig import Signature, find_function, parse_signature, split_top_level
from perfalign.measure.harness import PROBLEM_SIZES
from perfalign.measure.probe import ProbeProblem, Tolerance, hoist_includes, internal_helpers, run_twice

from ..config import DEFAULT_PAREVAL_DIR
from ..probe_sessions import probes_serial, score_probe_candidate, score_probes
from ..records import CandidateRequest, EvalPrompt, ScoreInputError, Skipped
from .base import EvalTask
from .bundled import bundled_problem, read_task_dir, sample_rows, task_tolerance

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig

MODELS = ("serial", "omp", "mpi")
EMBEDDED_SIZE_DIVISOR = 4
# ParEval's validate() checks these outputs more loosely than whole-output equality; the
# fingerprints follow ParEval: stencils skip the boundary, a convex hull is a set of points.
OUTPUT_RULES = {
    "50_stencil_xor_kernel": {"output": "interior2d"},
    "52_stencil_1d_jacobi_3-point_stencil": {"output": "interior1d"},
    "53_stencil_2d_jacobi_5-point_stencil": {"output": "interior2d"},
    "54_stencil_game_of_life": {"output": "interior2d"},
    "10_geometry_convex_hull": {"hull": "sorted"},
}
# The headers ParEval's cpu.cc and utilities.hpp include before the generated code: an honest
# completion compiles in the same context here.
CANDIDATE_HEADERS = ("algorithm", "cmath", "numeric", "random", "vector", "cassert", "climits", "cfloat", "string",
                     "complex", "queue", "type_traits", "array", "cstdlib", "cstdio", "cstring", "limits",
                     "functional", "iterator", "utility", "unordered_map", "map", "set", "stack", "tuple")
_FLOAT_LITERAL = re.compile(r"\b(\d+(?:\.\d+)?[eE]-\d+)\b")


class ParEvalError(ValueError):
    pass


@dataclass
class ParEvalCheckout:
    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        for rel in ("prompts/generation-prompts.json", "drivers/problem-sizes.json", "drivers/cpp/utilities.hpp",
                    "drivers/cpp/benchmarks"):
            if not (self.root / rel).exists():
                raise FileNotFoundError(f"{self.root} is not a ParEval checkout: {rel} is missing "
                                        "(expected parallelcodefoundry/ParEval's layout)")

    @cached_property
    def prompts(self) -> dict[tuple[str, str], str]:
        rows = json.loads((self.root / "prompts/generation-prompts.json").read_text())
        return {(r["name"], r["parallelism_model"]): r["prompt"] for r in rows}

    @cached_property
    def sizes(self) -> dict[str, dict[str, str]]:
        return json.loads((self.root / "drivers/problem-sizes.json").read_text())

    @cached_property
    def problem_dirs(self) -> dict[str, Path]:
        return {d.name: d for d in sorted((self.root / "drivers/cpp/benchmarks").glob("*/*"))
                if (d / "cpu.cc").is_file() and (d / "baseline.hpp").is_file()}

    def names(self) -> list[str]:
        return sorted(n for n in self.problem_dirs if any((n, m) in self.prompts for m in MODELS))

    def problem(self, name: str, model: str = "serial", problem_size: str = "reduced", threads: int = 2,
                ranks: int = 2) -> ProbeProblem:
        if model not in MODELS:
            raise ParEvalError(f"unknown ParEval execution model {model!r}; use one of {MODELS}")
        if problem_size not in PROBLEM_SIZES:
            raise ParEvalError(f"unknown problem_size {problem_size!r}; use one of {', '.join(PROBLEM_SIZES)}")
        d = self.problem_dirs.get(name)
        prompt = self.prompts.get((name, model))
        if d is None or prompt is None:
            raise ParEvalError(f"no ParEval problem {name!r} with a {model} prompt in {self.root} "
                               f"(`perfalign eval tasks --pareval-dir {self.root}` lists them)")
        lines = prompt.rstrip().splitlines()  # includes, types, comment; the signature line
        preamble, sig = "\n".join(lines[:-1]), parse_signature(lines[-1])
        cpu = (d / "cpu.cc").read_text()
        baseline_text, baseline_includes = hoist_includes((d / "baseline.hpp").read_text())
        ref_fn = _reference_function(cpu, len(sig.params), name)
        tol = Tolerance(abs=max(map(float, _FLOAT_LITERAL.findall(_body(cpu, "validate"))), default=1e-4))
        size = self.sizes[name][model]
        size = size if problem_size == "full" else f"(({size}) / {EMBEDDED_SIZE_DIVISOR})"
        trials = 1 if problem_size == "reduced" else 2
        mpi = model == "mpi"

        # --- driver TU (trusted)
        fps = _fingerprints(sig, OUTPUT_RULES.get(name, {}))
        extra = {"omp": "#include <omp.h>", "mpi": "#include <mpi.h>", "serial": ""}[model]
        cpu_body, _ = hoist_includes(cpu)
        utilities, _ = hoist_includes((self.root / "drivers/cpp/utilities.hpp").read_text())
        driver = "\n".join([
            f"#define USE_{model.upper()} 1",
            f"#define DRIVER_PROBLEM_SIZE {size}",
            f"#define MAX_VALIDATION_ATTEMPTS {trials}",
            *baseline_includes,
            probe_cpp.PRELUDE % {"extra_includes": extra},
            probe_cpp.REDIRECT_RAND,
            '#line 1 "utilities.hpp"', utilities,
            '#line 1 "generated-code.hpp"', internal_helpers(preamble), sig.text() + ";",
            probe_cpp.observer(sig.name, sig.ret, [(p.decl, p.name) for p in sig.params], fps, sig.returns_value),
            '#line 1 "baseline.hpp"', baseline_text,
            '#line 1 "cpu.cc"', cpu_body,
            '#line 1 "perfalign-main.cpp"',
            probe_cpp.main_source(
                validate="        Context* perfalign_ctx = init();\n"
                         "        const bool perfalign_ok = validate(perfalign_ctx);\n        destroy(perfalign_ctx);",
                timed_call=_timed_call(_body(cpu, "reset"))
                + ("\n            MPI_Barrier(MPI_COMM_WORLD);" if mpi else ""),
                mpi=mpi, omp_threads=threads if model == "omp" else None),
        ])

        # --- candidate TU: ParEval's headers, then the prompt's types, then the code
        headers = "\n".join([f"#include <{h}>" for h in CANDIDATE_HEADERS] + ([extra] if extra else []))
        ref_head = "\n".join(baseline_includes + ["#define NO_INLINE __attribute__((noinline))",
                                                  "namespace perfalign_ref {", baseline_text, "}"])
        reference, slow = run_twice(sig, f"perfalign_ref::{ref_fn}", ref_head)
        flags = ("-O3", "-std=c++17") + (("-fopenmp",) if model == "omp" else ())
        return ProbeProblem(
            suite="pareval", name=name, model=model, prompt=prompt, signature=sig,
            drivers={"V": driver, "T": driver}, candidate_prefix={"V": headers, "T": headers}, types=preamble,
            reference=reference, slow=slow, tolerance=tol,
            compile_flags=flags, toolchain=f"mpi:{ranks}" if mpi else "default",
            threads={"omp": threads, "mpi": ranks}.get(model, 1), clock="cpu" if model == "serial" else "wall",
            sizes={"V": f"ParEval validate(): its TEST_SIZE, {trials} trial(s)", "T": f"DRIVER_PROBLEM_SIZE={size}"},
            notes=[f"baseline {ref_fn}, float tolerance {tol.abs:g} (from ParEval's validate())"])


def _body(source: str, name: str) -> str:
    span = find_function(source, name)
    if span is None:
        raise ParEvalError(f"cpu.cc has no {name}()")
    return source[span[0]:span[1]]


def _reference_function(cpu: str, arity: int, name: str) -> str:
    """The baseline function the reference calls: the one ParEval's validate() computes the
    correct result with when it takes the prompt's arguments (07_fft_fft_conjugate: best()'s
    correctFft fails validate(), which expects fftCooleyTookey's result), else best()'s."""
    validate = _body(cpu, "validate")
    block = re.search(r"compute correct result(.*?)(?:compute test result|$)", validate, re.S)
    for stmt in (block.group(1).split(";") if block else []):
        call = re.search(r"(?<![\w:.])([A-Za-z_]\w*)\s*\((.*)\)\s*$", stmt.strip(), re.S)
        if call and call.group(1) not in ("if", "for", "while") and \
                len([a for a in split_top_level(call.group(2)) if a]) == arity:
            return call.group(1)
    best = _body(cpu, "best")
    m = re.search(r"\b([A-Za-z_]\w*)\s*\(", best[best.index("{"):])
    if not m:
        raise ParEvalError(f"{name}: cannot find the baseline call in best()")
    return m.group(1)


def _timed_call(reset: str) -> str:
    """ParEval's own timing loop: init() once, reset() (fresh inputs) before every later call;
    where reset() appends to its inputs without clearing them (46_sparse_la_spmm), they would
    grow with every call: a fresh init() per call instead."""
    if re.search(r"push_back|emplace|insert", reset) and "clear()" not in reset:
        return ("            static Context* perfalign_ctx = nullptr;\n"
                "            if (perfalign_ctx) destroy(perfalign_ctx);\n"
                "            perfalign_ctx = init();\n            compute(perfalign_ctx);")
    return ("            static Context* perfalign_ctx = init();\n"
            "            if (perfalign_i > 0) reset(perfalign_ctx);\n            compute(perfalign_ctx);")


def _fingerprints(sig: Signature, rules: dict[str, str]) -> list[str]:
    """The observer's statements: the return value and every output argument (OUTPUT_RULES)."""
    how = {"interior2d": "perfalign_fp_interior2d({}, N);", "interior1d": "perfalign_fp_interior1d({});",
           "sorted": "perfalign_fp_sorted({});"}
    return (["perfalign_fp(perfalign_result);"] if sig.returns_value else []) + \
        [how.get(rules.get(p.name, ""), "perfalign_fp({});").format(p.name) for p in sig.params if p.output]


class ParEvalTask(EvalTask[ProbeProblem]):
    """One prompt per (problem, execution model); the task labels are pareval-<model>."""

    name = "pareval"
    labels = {"pareval-serial": "ParEval Serial", "pareval-omp": "ParEval OpenMP", "pareval-mpi": "ParEval MPI"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
        checkout = (Path(config.pareval_dir) / "prompts" / "generation-prompts.json").is_file()
        return _load_checkout(config) if checkout else _load_sample(config)

    score = staticmethod(score_probes)
    serial = staticmethod(probes_serial)
    scores_one_by_one = True

    def problem_names(self, request: CandidateRequest) -> list[dict] | str:
        if not request.pareval_dir:  # what the pipeline evaluates; `eval score` needs a checkout
            return sample_rows(DEFAULT_PAREVAL_DIR, MODELS)
        co = ParEvalCheckout(request.pareval_dir)
        return [{"problem": n, "models": [m for m in MODELS if (n, m) in co.prompts]} for n in co.names()]

    def score_candidate(self, problem: str, code: str, request: CandidateRequest,
                        sandbox: "Sandbox") -> "tuple[ProbeScore, dict]":
        if not request.pareval_dir:
            raise ScoreInputError("--pareval-dir is required: a ParEval checkout (parallelcodefoundry/ParEval)")
        if request.model == "mpi" and (shutil.which("mpicxx") is None or shutil.which("mpirun") is None):
            raise ScoreInputError("MPI problems need Open MPI (mpicxx, mpirun): apt-get install openmpi-bin "
                                  "libopenmpi-dev (scripts/setup.sh does)")
        try:
            p = ParEvalCheckout(request.pareval_dir).problem(problem, request.model, request.problem_size,
                                                             threads=request.threads, ranks=request.ranks)
        except (ParEvalError, FileNotFoundError) as e:
            raise ScoreInputError(str(e)) from None
        return score_probe_candidate(p, code, request, sandbox)


def _load_checkout(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """ParEval's own problems from a checkout, run by the probe harness."""
    co = ParEvalCheckout(config.pareval_dir)
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    mpi_missing = shutil.which("mpicxx") is None or shutil.which("mpirun") is None
    for name in co.names():
        for model in config.pareval_models:
            task, prompt_id = f"pareval-{model}", f"{name}-{model}"
            if (name, model) not in co.prompts:
                continue
            if model == "mpi" and mpi_missing:
                skipped.append(Skipped(task, prompt_id, "no MPI implementation on this host (mpicxx/mpirun not "
                                                        "found; scripts/setup.sh installs Open MPI)"))
                continue
            p = co.problem(name, model, config.problem_size, threads=config.omp_threads, ranks=config.mpi_ranks)
            prompts.append(_prompt(p, {}, {"reference": 1.0, "slow": None, "fast": 1.0}))
    return prompts, skipped


# --- the bundled sample

_INCLUDE = {"serial": "", "omp": "#include <omp.h>\n\n", "mpi": "#include <mpi.h>\n\n"}
_NOTE = {
    "serial": "",
    "omp": "Use OpenMP to compute in parallel.\n",
    "mpi": ("Use MPI to compute in parallel. Assume MPI has already been initialized.\n"
            "Every rank has a complete copy of the inputs. The result is used on rank 0.\n"),
}
_REQUIRED = ("function", "signature", "description", "example", "execution_models")
# the bundled drivers' comparison of a call with the reference's (task.json "tolerance" overrides)
SAMPLE_TOLERANCE = Tolerance(abs=1e-6, rel=1e-6)


def pareval_header(meta: dict, model: str) -> str:
    """ParEval's prompt: includes, types, a comment with the task and an example, the open signature."""
    lines = (meta["description"].strip() + "\n" + _NOTE[model] + "Example:\n\n" + meta["example"].strip()).splitlines()
    rest = "\n".join(("   " + line) if line else "" for line in lines[1:])
    return f"{_INCLUDE[model]}{meta.get('preamble', '')}/* {lines[0]}\n{rest}\n*/\n{meta['signature']} {{"


def _load_sample(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """The bundled sample's problems (bundled.py), run by the probe harness like a checkout's."""
    root = Path(config.pareval_dir)
    problems = sorted(p for p in root.iterdir() if (p / "task.json").is_file()) if root.is_dir() else []
    if not problems:
        raise FileNotFoundError(f"no ParEval tasks (*/task.json) under {root}")
    prompts: list[EvalPrompt] = []
    skipped: list[Skipped] = []
    mpi_why = ("no MPI implementation on this host (mpicxx/mpirun not found)"  # why the MPI prompts are skipped
               if shutil.which("mpicxx") is None or shutil.which("mpirun") is None else
               "the bundled sample's drivers have no MPI harness: give --pareval-dir (a ParEval checkout) for "
               "ParEval's MPI problems")
    for d in problems:
        meta = read_task_dir(d, _REQUIRED, ("baseline.cpp", "driver.cpp"))
        tol = task_tolerance(d, meta, SAMPLE_TOLERANCE)
        for model in meta["execution_models"]:
            if model not in config.pareval_models:
                continue
            task, prompt_id = f"pareval-{model}", f"{d.name}-{model}"
            if model == "mpi":
                skipped.append(Skipped(task, prompt_id, mpi_why))
                continue
            p = bundled_problem(d, meta, (d / "baseline.cpp").read_text(), suite="pareval", model=model,
                                prompt=pareval_header(meta, model), tolerance=tol, headers=CANDIDATE_HEADERS,
                                threads=config.omp_threads)
            fast = d / f"fast_{model}.cpp"
            prompts.append(_prompt(p, {"fast": fast.read_text()} if fast.is_file() else {},
                                   {"reference": 1.0, "slow": 0.5, "fast": None if fast.is_file() else 1.0}))
    return prompts, skipped


def _prompt(p: ProbeProblem, references: dict[str, str], expected: dict[str, float | None]) -> EvalPrompt:
    """A problem's prompt in ParEval's form: its commented header the model completes, wrapped in
    the Listing 1 instruction; the oracles: reference, slow and (unless given) fast = reference."""
    text = instruction_prompt(f"Complete the C++ function {p.signature.name} below. Reply with the whole "
                              f"function.\n\n```cpp\n{p.prompt}\n```", "cpp")
    return EvalPrompt(f"pareval-{p.model}", p.key, text, "cpp", p.clock, p,
                      {"reference": p.reference, "slow": p.slow, "fast": p.reference, **references}, expected)
