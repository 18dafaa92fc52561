def first_true(lo: int, hi: int, pred) -> int:
    """Smallest x in [lo, hi) with pred(x) true, assuming pred is monotone; hi if none."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def integer_sqrt(n: int) -> int:
    return first_true(0, n + 2, lambda x: x * x > n) - 1
