from functools import lru_cache


@lru_cache(maxsize=None)
def count_paths(r: int, c: int) -> int:
    """Monotone lattice paths from (0, 0) to (r, c)."""
    if r == 0 or c == 0:
        return 1
    return count_paths(r - 1, c) + count_paths(r, c - 1)


def partitions(n: int) -> int:
    """Number of integer partitions of n, by dynamic programming over part sizes."""
    ways = [1] + [0] * n
    for part in range(1, n + 1):
        for total in range(part, n + 1):
            ways[total] += ways[total - part]
    return ways[n]
