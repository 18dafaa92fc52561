"""The kernel problems' size rules and output comparison, shared by the host and the sandboxed guest.

The host imports them (``kernelenv.problems``); the guest (``kernelenv/guest/``) is shipped with
this module, and with ``measure/timing_stats.py`` (``sandbox.shipping``), so both run one
implementation. Plain Python (``ast``, ``hashlib``; ``torch`` only inside ``compare``): nothing
here imports perfalign.
"""
from __future__ import annotations

import ast
import hashlib

SCALE_MIN = 16          # integer constants below this are structural (kernel sizes, dims, strides...)
TOLERANCES = {"float32": 1e-4, "float64": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}  # KernelBench's
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow, ast.Mod)


def _eval_int_expr(node):
    """The value of an int literal / arithmetic of int literals / tuple of those, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval_int_expr(node.operand)
        return -v if isinstance(v, int) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
        a, b = _eval_int_expr(node.left), _eval_int_expr(node.right)
        if not (isinstance(a, int) and isinstance(b, int)):
            return None
        if isinstance(node.op, ast.Pow):
            return a ** b if 0 <= b <= 64 else None
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            return None if b == 0 else (a // b if isinstance(node.op, ast.FloorDiv) else a % b)
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    if isinstance(node, ast.Tuple):
        vals = [_eval_int_expr(e) for e in node.elts]
        return tuple(vals) if all(isinstance(v, int) for v in vals) else None
    return None


def size_constants(source: str) -> dict:
    """Module-level ``NAME = <int expression>`` (or a tuple of them): the problem's sizes."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = _eval_int_expr(node.value)
            if v is not None:
                out[node.targets[0].id] = v
    return out


def scale_value(value, scale: float):
    """The scaling rule: every int >= SCALE_MIN becomes max(1, round(v * scale)); smaller ints
    (kernel sizes, strides, dims, groups) are kept. Tuples element by element."""
    if isinstance(value, tuple):
        return tuple(scale_value(v, scale) for v in value)
    if value < SCALE_MIN:
        return value
    return max(1, int(round(value * scale)))


def rewrite_constants(source: str, values: dict) -> str:
    """``source`` with the module-level size constants in ``values`` replaced (everything else,
    including constants derived from them, is kept and follows)."""
    tree = ast.parse(source)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in values):
            v = values[node.targets[0].id]
            node.value = (ast.Tuple([ast.Constant(x) for x in v], ast.Load()) if isinstance(v, tuple)
                          else ast.Constant(v))
    return ast.unparse(ast.fix_missing_locations(tree))


def _names_in(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def free_constants(source: str) -> list:
    """Size constants that only shape the inputs (read by ``get_inputs``, not by the model, its
    init inputs or anything else): the ones a trial may vary (problem randomization)."""
    tree = ast.parse(source)
    sizes = size_constants(source)
    deps, used_elsewhere, inputs_uses = {}, set(), set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            deps[node.targets[0].id] = _names_in(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name == "get_inputs":
            inputs_uses |= _names_in(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            used_elsewhere |= _names_in(node)

    def closure(names):
        seen, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(deps.get(n, ()))
        return seen

    fixed = closure(used_elsewhere)
    return sorted(n for n in closure(inputs_uses) - fixed if n in sizes)


def vary_sizes(source: str, rng) -> dict:
    """Random values for the free size constants (each distinct nominal value >= SCALE_MIN gets one
    factor in [0.6, 1.4], so constants that must agree keep agreeing); {} when nothing may vary."""
    sizes = size_constants(source)
    factors = {}

    def vary(v):
        if isinstance(v, tuple):
            return tuple(vary(x) for x in v)
        if v < SCALE_MIN:
            return v
        if v not in factors:
            factors[v] = rng.uniform(0.6, 1.4)
        new = max(1, int(round(v * factors[v])))
        return new if new != v else v + 1
    return {name: vary(sizes[name]) for name in free_constants(source)}


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def compare(out, ref) -> tuple:
    """(ok, reason, max_abs_err) of a candidate output against the reference output."""
    import torch

    if out.shape != ref.shape:
        return False, f"shape {tuple(out.shape)} != expected {tuple(ref.shape)}", None
    if out.dtype != ref.dtype:
        return False, f"dtype {out.dtype} != expected {ref.dtype}", None
    tol = TOLERANCES.get(_dtype_name(ref))  # allclose's rtol = atol; None: compare exactly
    if tol is None:
        ok = bool(torch.equal(out, ref))
        return ok, "" if ok else "values differ", None
    o, r = out.double(), ref.double()
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    if not torch.equal(nan_o, nan_r):  # NaN is never a wildcard
        return False, "NaN where the reference has none (or the reverse)", None
    o, r = o[~nan_r], r[~nan_r]
    if o.numel() == 0:
        return True, "", 0.0
    inf = torch.isinf(r)
    if not torch.equal(o[inf], r[inf]):
        return False, "infinities differ", None
    o, r = o[~inf], r[~inf]
    err = (o - r).abs()
    max_err = float(err.max()) if err.numel() else 0.0
    ok = bool(torch.all(err <= tol + tol * r.abs())) and not bool(torch.isinf(o).any())
    return ok, "" if ok else f"values differ (max abs error {max_err:.3g}, tolerance {tol:g})", max_err


def derive_seed(seed: int, *parts) -> int:
    h = hashlib.sha256(repr((seed,) + parts).encode()).digest()
    return int.from_bytes(h[:7], "little")
