"""Output checking as in CodeContests: token comparison, whitespace-insensitive,
floating-point tokens compared with a tolerance."""
from __future__ import annotations

import math

DEFAULT_TOLERANCE = 1e-6


def _as_float(tok: str) -> float | None:
    # Only tokens that look like decimals are compared numerically; integers stay exact
    # (a float compare would call 10**18 and 10**18+1 equal).
    if not any(c in tok for c in ".eE") or tok.lower() in ("inf", "nan", "-inf", "+inf"):
        return None
    try:
        return float(tok)
    except ValueError:
        return None


def tokens_match(expected: str, actual: str, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    if expected == actual:
        return True
    fe, fa = _as_float(expected), _as_float(actual)
    if fe is None or fa is None:
        # "3" vs "3.000000": compare numerically when either side is a decimal
        if fe is None and fa is None:
            return False
        try:
            fe, fa = float(expected), float(actual)
        except ValueError:
            return False
    return math.isclose(fe, fa, rel_tol=tolerance, abs_tol=tolerance)


def outputs_match(expected: str, actual: str, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """True when ``actual`` equals ``expected`` token by token (whitespace-insensitive)."""
    exp, act = expected.split(), actual.split()
    return len(exp) == len(act) and all(tokens_match(e, a, tolerance) for e, a in zip(exp, act))
