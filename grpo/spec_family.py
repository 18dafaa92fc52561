"""The controlled task family: a small fixed format the tiny model writes, which the harness
expands into real C for DGEMM (this package's design; the paper's model writes free C).

A completion is one line of ``key=value`` fields, e.g. ``order=ikj tile=32 simd=1 omp=0 unroll=4``:

- ``order``: loop nest order, a permutation of ijk (6 choices; ikj/kij stream rows of B and C,
  jki/kji stride through columns);
- ``tile``: 0 (none) or a cache-block size (blocking over i, j and k, remainders handled);
- ``simd``: 1 puts ``#pragma omp simd`` on the innermost loop (a reduction when it is k);
- ``omp``: 1 parallelizes the outermost i/j loop (``#pragma omp parallel for``; never k, which
  would race);
- ``unroll``: 1 (none) or 2/4/8 (``#pragma GCC unroll``).

The techniques of a spec are exactly what ``static.detect_techniques`` finds in its expansion
(checked in tests), so SQD checks generated and free code the same way.
"""
from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

ORDERS = tuple("".join(p) for p in itertools.permutations("ijk"))
TILES = (0, 16, 32, 64)
UNROLLS = (1, 2, 4, 8)
FIELDS = ("order", "tile", "simd", "omp", "unroll")


class SpecError(ValueError):
    """Not a valid spec: a format violation."""


@dataclass(frozen=True)
class Spec:
    order: str = "ijk"
    tile: int = 0
    simd: int = 0
    omp: int = 0
    unroll: int = 1

    def text(self) -> str:
        return f"order={self.order} tile={self.tile} simd={self.simd} omp={self.omp} unroll={self.unroll}"

    @property
    def techniques(self) -> frozenset[str]:
        used = {"openmp": self.omp, "simd": self.simd, "blocking": self.tile, "unroll": self.unroll > 1}
        return frozenset(t for t, on in used.items() if on)


def parse_spec(completion: str) -> Spec:
    """The spec of a completion's first non-empty line; SpecError when it is not exactly the
    format (unknown or missing field, value out of range, trailing text on the line)."""
    line = next((ln.strip() for ln in (completion or "").splitlines() if ln.strip()), "")
    if not line:
        raise SpecError("empty completion")
    fields: dict[str, str] = {}
    for part in line.split():
        m = re.fullmatch(r"(\w+)=(\w+)", part)
        if not m or m.group(1) not in FIELDS or m.group(1) in fields:
            raise SpecError(f"bad field {part[:40]!r}")
        fields[m.group(1)] = m.group(2)
    if set(fields) != set(FIELDS):
        raise SpecError(f"missing fields: {', '.join(f for f in FIELDS if f not in fields)}")
    try:
        spec = Spec(fields["order"], *(int(fields[f]) for f in FIELDS[1:]))
    except ValueError:
        raise SpecError("non-numeric value") from None
    if spec.order not in ORDERS or spec.tile not in TILES or spec.simd not in (0, 1) or spec.omp not in (0, 1) \
            or spec.unroll not in UNROLLS:
        raise SpecError(f"value out of range in {line[:80]!r}")
    return spec


def random_spec(rng: random.Random) -> Spec:
    return Spec(rng.choice(ORDERS), rng.choice(TILES), rng.randint(0, 1), rng.randint(0, 1), rng.choice(UNROLLS))


def compliant_spec(rng: random.Random, permitted: frozenset[str], p_use: float = 0.5) -> Spec:
    """A random spec using only ``permitted`` techniques, each with probability ``p_use`` (the
    prior of an instruction-following model told which techniques it may use)."""
    use = {t for t in permitted if rng.random() < p_use}
    return Spec(rng.choice(ORDERS), rng.choice(TILES[1:]) if "blocking" in use else 0, int("simd" in use),
                int("openmp" in use), rng.choice(UNROLLS[1:]) if "unroll" in use else 1)


def expand_dgemm(spec: Spec) -> str:
    """The C of ``spec`` for ``dgemm(n, alpha, A, B, beta, C)`` (C := alpha*A*B + beta*C,
    row-major): C is scaled by beta first, then alpha*A*B is accumulated in the spec's order."""
    o, T = spec.order, spec.tile
    lines = ["void dgemm(int n, double alpha, const double* A, const double* B, double beta, double* C) {",
             "    for (long p = 0; p < (long)n * n; ++p) C[p] *= beta;"]
    depth = 1

    def emit(text: str) -> None:
        lines.append("    " * depth + text)

    # the outermost i/j loop (tile loop when blocking) is the one parallelized; k never is
    par_var = next(v for v in o if v != "k")
    if T:
        for v in o:
            if spec.omp and v == par_var:
                emit("#pragma omp parallel for schedule(static)")
            emit(f"for (int {v}{v} = 0; {v}{v} < n; {v}{v} += {T}) {{")
            depth += 1
        bounds = {v: (f"{v}{v}", f"std::min(n, {v}{v} + {T})") for v in o}
    else:
        bounds = {v: ("0", "n") for v in o}
    inner = o[2]
    omp_pos = o.index(par_var) if spec.omp and not T else None
    unroll_pos = None if spec.unroll <= 1 else 2 if not spec.simd else (1 if omp_pos != 1 else 0)
    for pos, v in enumerate(o):
        lo, hi = bounds[v]
        # GCC takes one loop pragma per loop: with SIMD on the innermost loop, unrolling goes
        # to the middle one (still correct code; the two are separate techniques)
        if pos == 2 and inner == "k":
            emit("double acc = 0;")
        if spec.omp and not T and v == par_var:
            emit("#pragma omp parallel for schedule(static)")
        elif pos == 2 and spec.simd:
            emit("#pragma omp simd" + (" reduction(+:acc)" if inner == "k" else ""))
        elif pos == unroll_pos:
            emit(f"#pragma GCC unroll {spec.unroll}")
        emit(f"for (int {v} = {lo}; {v} < {hi}; ++{v}) {{")
        depth += 1
    if inner == "k":
        emit("acc += A[i * n + k] * B[k * n + j];")
    else:
        emit("C[i * n + j] += alpha * A[i * n + k] * B[k * n + j];")
    depth -= 1
    emit("}")
    if inner == "k":
        emit("C[i * n + j] += alpha * acc;")
    for _ in range(2 + (3 if T else 0)):
        depth -= 1
        emit("}")
    lines.append("}")
    return "#include <algorithm>\n" + "\n".join(ln for ln in lines if ln.strip()) + "\n"
