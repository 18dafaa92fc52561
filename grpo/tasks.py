"""Tasks: dense kernels an LLM optimizes, each a ``measure.probe.ProbeProblem`` (a trusted
driver translation unit plus the candidate's own TU, secret-seeded inputs, every call compared
with the reference's call) and a FLOP count the harness owns.

- ``dgemm``: C := alpha*A*B + beta*C on n x n row-major doubles (the paper's task). Built here:
  mode V validates two calls at two small sizes (one odd, so blocking remainders are exercised),
  mode T times calls at the problem size, compared call by call too (a third size).
- ``2mm``, ``syrk``, ``jacobi-2d``: PolyBench/C 4.2.1 kernels loaded from a checkout path
  (``evaluation.tasks.polybench``: its SMALL dataset validates, MEDIUM/LARGE is timed).

FLOP counts are the algorithmic counts of the kernels' definitions (multiply and add each one
flop; the scalar alpha/beta scalings are lower-order and not counted, as in the usual 2n^3 of
DGEMM); they are computed by the harness from the timed size, never reported by the program.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from perfalign.measure import probe_cpp
from perfalign.measure.cxxsig import parse_signature
from perfalign.measure.probe import ProbeProblem, Tolerance

DGEMM_SIGNATURE = "void dgemm(int n, double alpha, const double* A, const double* B, double beta, double* C)"
# mode V sizes (validation) and mode T size (timed) per problem size
DGEMM_SIZES = {"reduced": ((37, 64), 256), "full": ((67, 128), 1024)}
POLYBENCH_TASKS = ("2mm", "syrk", "jacobi-2d")
# reassociation (blocking, SIMD, threads) changes sums of n products by ~n ulp of the terms
DGEMM_TOLERANCE = Tolerance(abs=1e-9, rel=1e-9)


@dataclass
class GrpoTask:
    """One problem of the RL task set: its probe problem, FLOPs of one timed call, prompt text."""

    name: str
    problem: ProbeProblem
    flops: float                      # per timed call (mode T size)
    statement: str                    # what the prompt asks for
    signature: str
    sizes: dict = field(default_factory=dict)


def dgemm_flops(n: int) -> float:
    """FLOPs of one n x n x n DGEMM: 2 n^3 (one multiply and one add per term; the standard
    count of LAPACK Working Note 41 / HPL, which the paper's GFLOPS figure also uses)."""
    return 2.0 * n ** 3


def two_mm_flops(ni: int, nj: int, nk: int, nl: int) -> float:
    """FLOPs of PolyBench 2mm (tmp = alpha*A*B, D = beta*D + tmp*C): 2*NI*NJ*NK + 2*NI*NL*NJ
    (the two matrix products of the kernel's definition, PolyBench/C 4.2.1 2mm.c)."""
    return 2.0 * ni * nj * nk + 2.0 * ni * nl * nj


def syrk_flops(n: int, m: int) -> float:
    """FLOPs of PolyBench syrk (C = alpha*A*A^T + beta*C, lower triangle): N(N+1)/2 entries of
    M multiply-adds each, 2 flops per term: N(N+1)M (PolyBench/C 4.2.1 syrk.c)."""
    return float(n * (n + 1) * m)


def jacobi_2d_flops(tsteps: int, n: int) -> float:
    """FLOPs of PolyBench jacobi-2d: per step two sweeps over the (N-2)^2 interior, each point
    4 adds and 1 multiply: 10 * TSTEPS * (N-2)^2 (PolyBench/C 4.2.1 jacobi-2d.c)."""
    return 10.0 * tsteps * (n - 2) ** 2


def dgemm_task(problem_size: str = "reduced", threads: int = 1) -> GrpoTask:
    """The DGEMM probe problem (no external files)."""
    if problem_size not in DGEMM_SIZES:
        raise ValueError(f"unknown problem_size {problem_size!r}; expected one of {sorted(DGEMM_SIZES)}")
    (v1, v2), nt = DGEMM_SIZES[problem_size]
    call = r"""
namespace {
// fresh inputs in [-1, 1) from the call's secret seed, the candidate's call, C's fingerprint
void perfalign_dgemm_call(int n) {
    std::vector<double> A((size_t)n * n), B((size_t)n * n), C((size_t)n * n);
    for (auto* v : {&A, &B, &C}) for (auto& x : *v) x = 2 * perfalign_unit(perfalign_mix(perfalign_state)) - 1;
    const double alpha = 0.5 + perfalign_unit(perfalign_mix(perfalign_state));
    const double beta = 0.5 + perfalign_unit(perfalign_mix(perfalign_state));
    perfalign_call_begin();
    ::dgemm(n, alpha, A.data(), B.data(), beta, C.data());
    asm volatile("" : : : "memory");
    perfalign_call_end();
    if (perfalign_root()) perfalign_fp_reals(C.size(), [&](size_t i) { return C[i]; });
    perfalign_line_end();
}
}  // namespace
"""
    driver = "\n".join([
        probe_cpp.PRELUDE % {"extra_includes": "#include <omp.h>"},
        f"{DGEMM_SIGNATURE};",
        call,
        probe_cpp.main_source(
            validate=(f"        perfalign_reseed(0); perfalign_dgemm_call({v1});\n"
                      f"        perfalign_reseed(1); perfalign_dgemm_call({v2});\n"
                      "        const bool perfalign_ok = true;"),
            timed_call=f"            perfalign_dgemm_call({nt});",
            omp_threads=threads),
    ])
    reference = (DGEMM_SIGNATURE + " {\n"
                 "    for (int i = 0; i < n; ++i)\n        for (int j = 0; j < n; ++j) {\n"
                 "            double s = 0;\n"
                 "            for (int k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];\n"
                 "            C[i * n + j] = alpha * s + beta * C[i * n + j];\n        }\n}\n")
    slow = reference.replace("void dgemm(", "static void dgemm_once(", 1) + (
        DGEMM_SIGNATURE + " {\n"
        "    std::vector<double> c0(C, C + (size_t)n * n);\n    dgemm_once(n, alpha, A, B, beta, C);\n"
        "    asm volatile(\"\" : : : \"memory\");\n    std::copy(c0.begin(), c0.end(), C);\n"
        "    dgemm_once(n, alpha, A, B, beta, C);\n}\n")
    prefix = "#include <cstddef>\n#include <cmath>\n#include <vector>\n#include <algorithm>\n#include <omp.h>\n"
    problem = ProbeProblem(
        suite="grpo", name="dgemm", model="omp", prompt=DGEMM_SIGNATURE, signature=parse_signature(DGEMM_SIGNATURE),
        drivers={"V": driver, "T": driver}, candidate_prefix={"V": prefix, "T": prefix},
        reference=reference, slow="#include <vector>\n#include <algorithm>\n" + slow,
        tolerance=DGEMM_TOLERANCE, compile_flags=("-O3", "-march=native", "-fopenmp"),
        threads=threads, clock="wall" if threads > 1 else "cpu", memory_mb=1024,
        sizes={"V": f"n={v1},{v2}", "T": f"n={nt}"}, validate_calls=2)
    statement = ("Write the C function\n" + DGEMM_SIGNATURE + "\ncomputing C := alpha*A*B + beta*C for n x n "
                 "row-major double matrices.")
    return GrpoTask("dgemm", problem, dgemm_flops(nt), statement, DGEMM_SIGNATURE, {"V": (v1, v2), "T": nt})


_DATASET_BLOCK = re.compile(r"#\s*ifdef\s+(\w+_DATASET)(.*?)#\s*endif", re.S)


def polybench_sizes(header: str, dataset: str) -> dict[str, int]:
    """The ``#define NAME value`` lines of one ``*_DATASET`` block of a PolyBench header."""
    for m in _DATASET_BLOCK.finditer(header):
        if m.group(1) == dataset:
            return {k: int(v) for k, v in re.findall(r"#\s*define\s+(\w+)\s+(\d+)", m.group(2))}
    raise ValueError(f"no {dataset} block in the header")


_FLOPS = {
    "2mm": lambda s: two_mm_flops(s["NI"], s["NJ"], s["NK"], s["NL"]),
    "syrk": lambda s: syrk_flops(s["N"], s["M"]),
    "jacobi-2d": lambda s: jacobi_2d_flops(s["TSTEPS"], s["N"]),
}


def polybench_task(polybench_dir: str | Path, name: str, problem_size: str = "reduced", threads: int = 1) -> GrpoTask:
    """A PolyBench/C kernel from a checkout (never copied here); raises FileNotFoundError when
    the path is not a checkout and ValueError for a kernel without a FLOP model."""
    from perfalign.evaluation.tasks.polybench import DATASETS, PolyBenchCheckout

    if name not in _FLOPS:
        raise ValueError(f"no FLOP model for PolyBench kernel {name!r}; supported: {', '.join(_FLOPS)}")
    co = PolyBenchCheckout(Path(polybench_dir))
    model = "omp" if threads > 1 else "serial"
    problem = co.problem(name, problem_size=problem_size, model=model, threads=threads)
    header = co.kernels[name].with_suffix(".h").read_text()
    sizes = polybench_sizes(header, DATASETS[problem_size][1])
    statement = (f"Rewrite the PolyBench/C kernel {problem.signature.name} below to run faster, same "
                 f"signature and results:\n{problem.prompt}")
    return GrpoTask(name, problem, _FLOPS[name](sizes), statement, problem.signature.text(),
                    {"V": DATASETS[problem_size][0], "T": sizes})


def load_tasks(names: list[str] | tuple[str, ...], problem_size: str = "reduced", threads: int = 1,
               polybench_dir: str | Path | None = None) -> dict[str, GrpoTask]:
    out = {}
    for name in names:
        if name == "dgemm":
            out[name] = dgemm_task(problem_size, threads)
        elif name in POLYBENCH_TASKS:
            if not polybench_dir:
                raise ValueError(f"task {name!r} needs --polybench-dir (a PolyBench/C 4.2.1 checkout)")
            out[name] = polybench_task(polybench_dir, name, problem_size, threads)
        else:
            raise ValueError(f"unknown task {name!r}; expected dgemm or one of {', '.join(POLYBENCH_TASKS)}")
    return out
