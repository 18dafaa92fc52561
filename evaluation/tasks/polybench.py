"""The ``polybench`` task (paper §VI-B, code optimization): PolyBench kernels the model is asked
to make faster. ``polybench_dir`` is one of two sources, read by the one ``PolyBenchTask.load``: a
PolyBench/C 4.2.1 checkout or the bundled PolyBench-style sample (data/polybench_sample, the
default). Both are probe problems scored by the one path, the probe harness (measure/,
evaluation/probe_sessions.py); only their constructors differ (the sample is not in PolyBench/C's
layout: tasks/bundled.py says why).

The checkout. PolyBench/C 4.2.1 loaded from a user's checkout: its 30 kernels (``utilities/benchmark_list``)
with their own datasets (the ``*_DATASET`` sizes of each kernel's header), ``init_array`` and
``print_array``. Nothing of PolyBench is copied into this repository: the files are read from
``--polybench-dir`` at run time and assembled into sandbox jobs (compiled as C++ with g++).

How a kernel becomes a probe (measure/probe_cpp.py has the protocol):

- driver TU = ``polybench.h`` + the kernel's header + the kernel's ``.c`` without its kernel
  function (its ``main``, ``init_array`` and ``print_array`` kept) + ``polybench.c`` + our
  ``main``. PolyBench's ``main`` runs once: it allocates and initializes the arrays; its kernel
  call goes to an observer that keeps a pristine copy of every argument and then, for every
  call, restores it, perturbs it with the call's secret seed (every array element scaled by
  ``(1 + d*u_i)(1 + d*v_j)...`` with factors per index of each dimension, so a matrix with equal
  dimensions keeps its symmetry and definiteness — cholesky, lu; integer arrays get +0/+1),
  calls the candidate, and fingerprints exactly the values ``print_array`` dumps (PolyBench's own
  output, the reference check; ``fprintf`` is hooked to record the numbers without formatting).
- candidate TU = the same headers and the ``.c``'s own macros/typedefs, then the candidate's
  ``kernel_*`` function (``static`` dropped). Mode V runs the SMALL dataset (two calls), mode T
  the timed dataset: MEDIUM for the embedded profile, LARGE (PolyBench's default) for production.
- reference = the original kernel; slow = the original kernel run twice on the same memory, its
  arrays restored in between.

The bundled sample. Each kernel directory holds ``task.json`` (function, signature, in-out arrays
with their element counts: restored between the slow oracle's two runs), ``kernel.cpp`` (the
original kernel: what the model is asked to optimize, the correctness reference and the speedup
baseline), ``driver.cpp`` (bundled.py) and optionally ``fast.cpp`` (a known faster version, used
by the oracle). The prompt is the optimization variant of Listing 1 with the kernel's source.

Candidates are serial by default (CPU time); with ``polybench_openmp`` they are compiled with
``-fopenmp`` and timed by wall time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from perfalign.common.prompts import optimization_prompt
from perfalign.measure import probe_cpp
from perfalign.measure.cxxsig import Param, Signature, find_function, split_top_level
from perfalign.measure.probe import ProbeProblem, Tolerance, hoist_includes

from ..config import DEFAULT_POLYBENCH_DIR
from ..probe_sessions import probes_serial, score_probe_candidate, score_probes
from ..records import CandidateRequest, EvalPrompt, ScoreInputError, Skipped
from .base import EvalTask
from .bundled import bundled_problem, read_task_dir, sample_rows

if TYPE_CHECKING:
    from perfalign.measure.harness import ProbeScore
    from perfalign.sandbox import Sandbox

    from ..config import EvalConfig

DATASETS = {"reduced": ("SMALL_DATASET", "MEDIUM_DATASET"), "full": ("MEDIUM_DATASET", "LARGE_DATASET")}
PERTURBATION = 1.0 / 64  # relative size of the secret per-call input scaling
# PolyBench has no tolerance of its own (it dumps 2 decimals): relative 1e-6 on the dumped values
TOLERANCE = Tolerance(abs=1e-9, rel=1e-6)
_ARRAY = re.compile(r"^(?P<type>\w+)\s+POLYBENCH_(?P<rank>\d)D\((?P<args>[^)]*)\)$")


class PolyBenchError(ValueError):
    pass


@dataclass(frozen=True)
class KernelParam:
    decl: str
    name: str
    type: str                   # DATA_TYPE, int, base...
    dims: tuple[str, ...] = ()  # compile-time extents (macros), empty for a scalar


@dataclass
class PolyBenchCheckout:
    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        for rel in ("utilities/polybench.h", "utilities/polybench.c", "utilities/benchmark_list"):
            if not (self.root / rel).is_file():
                raise FileNotFoundError(f"{self.root} is not a PolyBench/C checkout: {rel} is missing")

    @cached_property
    def kernels(self) -> dict[str, Path]:
        paths = [(self.root / line).resolve() for line in (self.root / "utilities/benchmark_list").read_text().split()]
        return dict(sorted({p.stem: p for p in paths if p.is_file()}.items()))

    def names(self) -> list[str]:
        return list(self.kernels)

    def problem(self, name: str, problem_size: str = "reduced", model: str = "serial",
                threads: int = 2) -> ProbeProblem:
        if problem_size not in DATASETS:
            raise PolyBenchError(f"unknown problem_size {problem_size!r}; use one of {', '.join(DATASETS)}")
        if model not in ("serial", "omp"):
            raise PolyBenchError(f"PolyBench runs serial or omp, not {model!r}")
        path = self.kernels.get(name)
        if path is None:
            raise PolyBenchError(f"no PolyBench kernel {name!r} in {self.root} "
                                 f"(`perfalign eval tasks --polybench-dir {self.root}` lists them)")
        source = path.read_text()
        header = path.with_suffix(".h").read_text()
        m = re.search(r"void\s+(kernel_\w+)\s*\(", source)
        if not m:
            raise PolyBenchError(f"{path}: no kernel_* function")
        kname = m.group(1)
        span = find_function(source, kname)
        if span is None:
            raise PolyBenchError(f"{path}: cannot delimit {kname}()")
        kernel_text = re.sub(r"^static\s+", "", source[span[0]:span[1]].strip())
        params = _params_of(source, kname)
        printed = _params_of(source, "print_array")
        c_text, _ = hoist_includes(source[:span[0]] + source[span[1]:])  # the .c without its kernel
        polybench_h, _ = hoist_includes((self.root / "utilities/polybench.h").read_text())
        polybench_c, _ = hoist_includes((self.root / "utilities/polybench.c").read_text())
        c_includes = [f"#include <{h}.h>" for h in ("stdio", "stdlib", "string", "math", "unistd", "assert", "time",
                                                     "sys/time", "sys/resource", "sched")]
        macros = _top_level_macros(source)
        omp = model == "omp"
        sig = Signature("void", kname, tuple(Param(p.decl, p.name, False, bool(p.dims)) for p in params))
        decl = ", ".join(p.decl for p in params)
        args = ", ".join(p.name for p in params)
        v_set, t_set = DATASETS[problem_size]

        def headers(dataset: str) -> str:
            return "\n".join([f"#define {dataset} 1", *c_includes, *(["#include <omp.h>"] if omp else []),
                              '#line 1 "polybench.h"', polybench_h,
                              "#undef POLYBENCH_DUMP_TARGET", "#define POLYBENCH_DUMP_TARGET stdout",
                              f'#line 1 "{path.stem}.h"', header, macros])

        def driver(dataset: str) -> str:
            return "\n".join([
                f"#define {dataset} 1", "#define POLYBENCH_DUMP_ARRAYS 1", *c_includes,
                probe_cpp.PRELUDE % {"extra_includes": "#include <omp.h>" if omp else ""},
                '#line 1 "polybench.h"', polybench_h,
                "#undef POLYBENCH_DUMP_TARGET", "#define POLYBENCH_DUMP_TARGET stdout",
                '#line 1 "polybench.c"', polybench_c,
                f'#line 1 "{path.stem}.h"', header, macros,
                f"void {kname}({decl});",
                f"namespace {{ void perfalign_observe_{kname}({decl}); }}",
                f"#define {kname} perfalign_observe_{kname}",
                probe_cpp.DUMP_HOOK % {"value_type": "int" if re.search(r"#\s*define\s+DATA_TYPE_IS_INT", header)
                                       else "double"},
                "#define fprintf perfalign_dump_fprintf",
                "#define main perfalign_polybench_main",
                f'#line 1 "{path.name}"', c_text,
                "#undef main", "#undef fprintf", f"#undef {kname}",
                _observer(kname, params, printed, decl),
                '#line 1 "perfalign-main.cpp"',
                probe_cpp.main_source(
                    validate="        perfalign_polybench_main(argc, argv);\n        const bool perfalign_ok = true;",
                    timed_call="            perfalign_polybench_main(argc, argv);", per_call=False,
                    omp_threads=threads if omp else None),
            ])

        # reference / slow: the original kernel, renamed, behind the kernel's signature
        ref_kernel = re.sub(rf"\b{kname}\s*\(", f"perfalign_ref_{kname}(", kernel_text, count=1)
        reference = f"static {ref_kernel}\nvoid {kname}({decl}) {{\n    perfalign_ref_{kname}({args});\n}}\n"
        arrays = [p for p in params if p.dims]
        array_names = {p.name for p in arrays}
        saves = [f"    std::vector<{p.type}> perfalign_saved_{p.name}(({p.type}*){p.name}, ({p.type}*){p.name} + "
                 f"{_count(p)});" for p in arrays]
        restores = [f"    std::copy(perfalign_saved_{p.name}.begin(), perfalign_saved_{p.name}.end(), "
                    f"({p.type}*){p.name});" for p in arrays]
        slow = (f"#include <vector>\n#include <algorithm>\nstatic {ref_kernel}\nvoid {kname}({decl}) {{\n"
                + "\n".join(saves + [f"    perfalign_ref_{kname}({args});", '    asm volatile("" : : : "memory");']
                            + restores) + f"\n    perfalign_ref_{kname}({args});\n}}\n")
        flags = ("-O3",) + (("-fopenmp",) if omp else ())
        return ProbeProblem(
            suite="polybench", name=name, model=model, prompt=kernel_text, signature=sig,
            drivers={"V": driver(v_set), "T": driver(t_set)},
            candidate_prefix={"V": headers(v_set), "T": headers(t_set)}, reference=reference, slow=slow,
            tolerance=TOLERANCE, compile_flags=flags, threads=threads if omp else 1, clock="wall" if omp else "cpu",
            sizes={"V": v_set, "T": t_set}, provided_headers=("polybench.h", f"{path.stem}.h"), validate_calls=2,
            notes=[f"{kname}; dumped arrays {', '.join(p.name for p in printed if p.name in array_names)}"])


def _params_of(source: str, function: str) -> list[KernelParam]:
    m = re.search(rf"\b{re.escape(function)}\s*\((.*?)\)\s*\{{", source, re.S)
    if not m:
        raise PolyBenchError(f"no {function}() found")
    out = []
    for decl in split_top_level(" ".join(m.group(1).split())):
        a = _ARRAY.match(decl)
        if a:
            args = [x.strip() for x in a.group("args").split(",")]
            out.append(KernelParam(decl, args[0], a.group("type"), tuple(args[1:1 + int(a.group("rank"))])))
        else:
            typ, name = decl.rsplit(" ", 1)
            out.append(KernelParam(decl, name, typ))
    return out


def _top_level_macros(source: str) -> str:
    """The .c's own #define / typedef lines (nussinov's ``base``, ``match``, ``max_score``):
    the kernel needs them in the candidate's TU too."""
    keep = [line for line in source.splitlines()
            if re.match(r"#\s*define\s|typedef\s", line.strip()) and not line.startswith((" ", "\t"))]
    return "\n".join(keep)


def _count(p: KernelParam) -> str:
    return "*".join(f"(size_t)({d})" for d in p.dims)


def _observer(kname: str, params: list[KernelParam], printed: list[KernelParam], decl: str) -> str:
    """The observer: pristine copies, then per call restore + secret perturbation + candidate
    call + fingerprint of what print_array dumps."""
    arrays = [p for p in params if p.dims]
    scalars = [p for p in params if not p.dims and p.type != "int"]
    dim_names = sorted({d for p in arrays for d in p.dims})
    lines = [f"namespace {{\nvoid perfalign_observe_{kname}({decl}) {{"]
    for p in arrays:
        lines.append(f"    std::vector<{p.type}> perfalign_pristine_{p.name}(({p.type}*){p.name}, "
                     f"({p.type}*){p.name} + {_count(p)});")
    for p in scalars:
        lines.append(f"    const {p.type} perfalign_pristine_{p.name} = {p.name};")
    lines.append("    for (long perfalign_i = 0; perfalign_i < perfalign_calls; ++perfalign_i) {")
    lines.append("        perfalign_reseed(perfalign_i);")
    for d in dim_names:  # one scaling vector per extent: equal extents get equal factors
        lines.append(f"        std::vector<double> perfalign_s_{d}((size_t)({d}));")
        lines.append(f"        for (auto& f : perfalign_s_{d}) f = 1.0 + {PERTURBATION!r} * (2 * perfalign_unit("
                     "perfalign_mix(perfalign_state)) - 1);")
    for p in arrays:
        lines.append(f"        std::copy(perfalign_pristine_{p.name}.begin(), perfalign_pristine_{p.name}.end(), "
                     f"({p.type}*){p.name});")
        idx = [f"perfalign_k{k}" for k in range(len(p.dims))]
        loops = "".join(f"for (size_t {i} = 0; {i} < (size_t)({d}); ++{i}) " for i, d in zip(idx, p.dims))
        flat = idx[0]
        for i, d in zip(idx[1:], p.dims[1:]):
            flat = f"({flat}) * (size_t)({d}) + {i}"
        scale = " * ".join(f"perfalign_s_{d}[{i}]" for i, d in zip(idx, p.dims))
        lines.append(f"        {{ {p.type}* perfalign_a = ({p.type}*){p.name}; {loops}"
                     f"perfalign_perturb(perfalign_a[{flat}], {scale}); }}")
    for p in scalars:
        lines.append(f"        {p.name} = ({p.type})(perfalign_pristine_{p.name} * (1.0 + {PERTURBATION!r} * "
                     "(2 * perfalign_unit(perfalign_mix(perfalign_state)) - 1)));")
    lines.append("        perfalign_dump_values.clear();")
    lines.append("        perfalign_call_begin();")
    lines.append(f"        ::{kname}({', '.join(p.name for p in params)});")
    lines.append('        asm volatile("" : : : "memory");')
    lines.append("        perfalign_call_end();")
    lines.append("        perfalign_dump_values.clear();\n        perfalign_dump_marks.clear();")
    lines.append(f"        print_array({', '.join(p.name for p in printed)});")
    lines.append("        if (perfalign_root()) perfalign_fp_dump();")
    lines.append("        perfalign_line_end();")
    lines.append("    }\n}\n}")
    return "\n".join(lines)


class PolyBenchTask(EvalTask[ProbeProblem]):
    name = "polybench"
    labels = {"polybench": "PolyBench"}

    def load(self, config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
        checkout = (Path(config.polybench_dir) / "utilities" / "polybench.h").is_file()
        return _load_checkout(config) if checkout else _load_sample(config)

    score = staticmethod(score_probes)
    serial = staticmethod(probes_serial)
    scores_one_by_one = True

    def problem_names(self, request: CandidateRequest) -> list[dict] | str:
        if not request.polybench_dir:  # what the pipeline evaluates; `eval score` needs a checkout
            return sample_rows(DEFAULT_POLYBENCH_DIR, ("serial", "omp"))
        return [{"problem": n, "models": ["serial", "omp"]} for n in PolyBenchCheckout(request.polybench_dir).names()]

    def score_candidate(self, problem: str, code: str, request: CandidateRequest,
                        sandbox: "Sandbox") -> "tuple[ProbeScore, dict]":
        if not request.polybench_dir:
            raise ScoreInputError("--polybench-dir is required: a PolyBench/C 4.2.1 checkout")
        try:
            p = PolyBenchCheckout(request.polybench_dir).problem(problem, request.problem_size, request.model,
                                                                 threads=request.threads)
        except (PolyBenchError, FileNotFoundError) as e:
            raise ScoreInputError(str(e)) from None
        return score_probe_candidate(p, code, request, sandbox)


def _load_checkout(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """PolyBench/C 4.2.1's 30 kernels from a checkout, run by the probe harness."""
    co = PolyBenchCheckout(config.polybench_dir)
    model = "omp" if config.polybench_openmp else "serial"
    prompts = []
    for name in co.names():
        p = co.problem(name, config.problem_size, model, threads=config.omp_threads)
        problem = (f"PolyBench/C kernel {name} ({p.sizes['T']}). Keep the signature of {p.signature.name}; the "
                   "arrays it dumps must stay the same (relative difference at most 1e-6).")
        prompts.append(EvalPrompt("polybench", name, optimization_prompt(problem, "cpp", p.prompt), "cpp", p.clock, p,
                                  {"reference": p.reference, "slow": p.slow, "fast": p.reference},
                                  {"reference": 1.0, "slow": None, "fast": 1.0}))
    return prompts, []


# --- the bundled sample

_REQUIRED = ("kernel", "function", "signature", "description")
SAMPLE_HEADERS = ("algorithm", "cmath", "cstddef", "cstring", "vector")  # in the candidate's TU


def _load_sample(config: "EvalConfig") -> tuple[list[EvalPrompt], list[Skipped]]:
    """The bundled sample's kernels (bundled.py), run by the probe harness like a checkout's."""
    root = Path(config.polybench_dir)
    kernels = sorted(p for p in root.iterdir() if (p / "task.json").is_file()) if root.is_dir() else []
    if not kernels:
        raise FileNotFoundError(f"no PolyBench kernels (*/task.json) under {root}")
    model = "omp" if config.polybench_openmp else "serial"
    prompts: list[EvalPrompt] = []
    for d in kernels:
        meta = read_task_dir(d, _REQUIRED, ("kernel.cpp", "driver.cpp"))
        kernel = (d / "kernel.cpp").read_text()
        p = bundled_problem(d, meta, kernel, suite="polybench", model=model, prompt=kernel, tolerance=TOLERANCE,
                            headers=SAMPLE_HEADERS, threads=config.omp_threads)
        fast = d / "fast.cpp"
        problem = (f"PolyBench kernel {meta['kernel']}: {meta['description']}\n"
                   f"Keep the signature `{meta['signature']}`; the results must stay the same "
                   f"(relative difference at most 1e-6).")
        prompts.append(EvalPrompt(
            "polybench", p.key, optimization_prompt(problem, "cpp", kernel), "cpp", p.clock, p,
            {"reference": p.reference, "slow": p.slow, "fast": fast.read_text() if fast.is_file() else p.reference},
            {"reference": 1.0, "slow": 0.5, "fast": None if fast.is_file() else 1.0}))
    return prompts, []
