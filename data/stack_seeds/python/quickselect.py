import random


def quickselect(values, k, rng=random.Random(0)):
    """k-th smallest element (0-based) in expected linear time."""
    values = list(values)
    lo, hi = 0, len(values) - 1
    while True:
        if lo == hi:
            return values[lo]
        pivot = values[rng.randint(lo, hi)]
        lt = [v for v in values[lo:hi + 1] if v < pivot]
        eq = [v for v in values[lo:hi + 1] if v == pivot]
        gt = [v for v in values[lo:hi + 1] if v > pivot]
        values[lo:hi + 1] = lt + eq + gt
        if k < lo + len(lt):
            hi = lo + len(lt) - 1
        elif k < lo + len(lt) + len(eq):
            return pivot
        else:
            lo = lo + len(lt) + len(eq)
