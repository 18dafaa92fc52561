"""The bundled ParEval-style and PolyBench-style samples (data/pareval_sample, data/polybench_sample)
as probe problems: scored by the probe harness (measure/harness.py), the path of the real suites'
checkouts. A problem directory holds ``task.json``, the baseline (``baseline.cpp`` / ``kernel.cpp``),
``driver.cpp`` and optionally a known faster solution (the oracle's).

The driver (written for this project) defines ``Context``, ``init()`` (allocation, pristine
values), ``reset()`` (fresh inputs for the next call, drawn from the call's secret seed: ParEval's
``fillRand`` or ``perfalign_fresh``, which scales pristine values per element; outputs cleared),
``compute()`` (calls the function under test) and ``fingerprint()`` (the outputs a call is judged
by). Its translation unit is probe_cpp's prelude and seeded fills, the prompt's types, the
function's declaration, the driver and our ``main``; the candidate is its own translation unit.
Mode V runs ``VALIDATE_CALLS`` calls, mode T the timed calls, each on fresh secret inputs and
compared with the reference's call on the same inputs (there is no expected value in the driver:
the reference's transcript is the expectation, within ``tolerance`` of task.json).

These are not in the real suites' layouts (ParEval's generation-prompts.json, cpu.cc and
utilities.hpp; PolyBench/C's polybench.h and VLA kernels): reading them as checkouts would take
a clone of both suites' harness files and rewriting every kernel, prompt and oracle into them;
this constructor is the one difference, the scoring path is the same.
"""
from __future__ import annotations

import json
from pathlib import Path

from perfalign.measure import probe_cpp
from perfalign.measure.cxxsig import parse_signature
from perfalign.measure.probe import ProbeProblem, Tolerance, internal_helpers, run_twice


def sample_rows(root: Path, models: tuple[str, ...]) -> list[dict]:
    """`perfalign eval tasks`'s rows for a bundled sample: each problem with the execution models
    its task.json names (else ``models``), marked as the bundled sample's."""
    rows = []
    for d in sorted(p for p in root.iterdir() if (p / "task.json").is_file()):
        meta = json.loads((d / "task.json").read_text())
        rows.append({"problem": d.name, "models": list(meta.get("execution_models", models)), "bundled": True})
    return rows


VALIDATE_CALLS = 2  # mode V: untimed calls, each compared with the reference's
# Draws for the bundled drivers' reset(): fresh values per call from the call's secret seed
# (perfalign_state, reseeded per call), vectorizable like probe_cpp's fills (per-call overhead
# is what every timing subtracts).
SAMPLE_HELPERS = r"""
namespace {
inline double perfalign_uniform(double lo, double hi) {
    return lo + (hi - lo) * perfalign_unit(perfalign_mix(perfalign_state));
}
// x = pristine scaled per element by (1 + u/64), u uniform in [-1, 1)
PERFALIGN_HOT void perfalign_fresh(std::vector<double>& x, const std::vector<double>& pristine) {
    x.resize(pristine.size());
    const uint64_t key = perfalign_mix(perfalign_state);
    const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    const double* __restrict p = pristine.data();
    double* __restrict y = x.data();
    for (size_t i = 0; i < x.size(); ++i)
        y[i] = p[i] * (1.0 + 0x1.0p-37 * (double)(int32_t)perfalign_bits((uint32_t)i, k0, k1));
}
}  // namespace
"""
CALL = r"""
namespace {
// one call: fresh inputs (untimed by the in-process clock), the candidate, its outputs' fingerprint
void perfalign_sample_call() {
    static Context* perfalign_ctx = init();
    reset(perfalign_ctx);
    perfalign_call_begin();
    compute(perfalign_ctx);
    asm volatile("" : : : "memory");
    perfalign_call_end();
    if (perfalign_root()) fingerprint(perfalign_ctx);
    perfalign_line_end();
}
}  // namespace
"""


def read_task_dir(d: Path, required: tuple[str, ...], files: tuple[str, ...]) -> dict:
    """``task.json`` of a bundled problem directory, checked for its fields and companion files."""
    try:
        meta = json.loads((d / "task.json").read_text())
    except ValueError as e:
        raise ValueError(f"{d / 'task.json'}: not valid JSON ({e})") from None
    missing = [k for k in required if k not in meta]
    if missing:
        raise ValueError(f"{d / 'task.json'}: missing fields {missing}")
    for f in files:
        if not (d / f).is_file():
            raise FileNotFoundError(f"task {d.name}: missing {f}")
    return meta


def task_tolerance(d: Path, meta: dict, default: Tolerance) -> Tolerance:
    """task.json's optional ``tolerance`` ({"abs": x, "rel": y}), or ``default``."""
    tol = meta.get("tolerance")
    if tol is None:
        return default
    try:
        out = Tolerance(**{k: float(v) for k, v in tol.items()})
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"{d / 'task.json'}: tolerance must be {{\"abs\": number, \"rel\": number}}, "
                         f"got {tol!r}") from None
    if out.abs < 0 or out.rel < 0:
        raise ValueError(f"{d / 'task.json'}: tolerance must not be negative, got {tol!r}")
    return out


def bundled_problem(d: Path, meta: dict, baseline: str, *, suite: str, model: str, prompt: str,
                    tolerance: Tolerance, headers: tuple[str, ...], threads: int = 2) -> ProbeProblem:
    """The probe problem of one bundled problem directory in one execution model (serial, omp);
    ``headers``: the standard headers in the candidate's translation unit."""
    if model not in ("serial", "omp"):
        raise ValueError(f"{d.name}: the bundled drivers run serial or omp, not {model!r}")
    sig = parse_signature(meta["signature"])
    if sig.name != meta["function"]:
        raise ValueError(f"{d / 'task.json'}: the signature does not declare {meta['function']}")
    omp = model == "omp"
    types = meta.get("preamble", "")
    driver = "\n".join([
        probe_cpp.PRELUDE % {"extra_includes": "#include <omp.h>" if omp else ""},
        probe_cpp.REDIRECT_RAND, SAMPLE_HELPERS,
        '#line 1 "prompt.hpp"', internal_helpers(types), sig.text() + ";",
        '#line 1 "driver.cpp"', (d / "driver.cpp").read_text(), CALL,
        '#line 1 "perfalign-main.cpp"',
        probe_cpp.main_source(
            validate="        for (long perfalign_i = 0; perfalign_i < calls; ++perfalign_i) {\n"
                     "            perfalign_reseed(perfalign_i);\n            perfalign_sample_call();\n        }\n"
                     "        const bool perfalign_ok = true;",
            timed_call="            perfalign_sample_call();", omp_threads=threads if omp else None),
    ])
    prefix = "".join(f"#include <{h}>\n" for h in headers + (("omp.h",) if omp else ()))
    head = f"namespace perfalign_ref {{\n{baseline}\n}}"
    reference, slow = run_twice(sig, f"perfalign_ref::{sig.name}", head, meta.get("inout", {}))
    return ProbeProblem(
        suite=suite, name=d.name, model=model, prompt=prompt,
        signature=sig, drivers={"V": driver, "T": driver}, candidate_prefix={"V": prefix, "T": prefix},
        reference=reference, slow=slow, tolerance=tolerance, compile_flags=("-O3", "-std=c++17")
        + (("-fopenmp",) if omp else ()), threads=threads if omp else 1, clock="wall" if omp else "cpu",
        memory_mb=int(meta.get("memory_mb", 1024)), types=types, validate_calls=VALIDATE_CALLS,
        sizes={"V": f"{meta.get('size', 'the driver size')}, {VALIDATE_CALLS} calls",
               "T": meta.get("size", "the driver size")},
        notes=[f"bundled sample {d.name}: tolerance abs {tolerance.abs:g}, rel {tolerance.rel:g}"])
