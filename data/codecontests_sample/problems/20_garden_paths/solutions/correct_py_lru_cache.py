import sys
from functools import lru_cache

sys.setrecursionlimit(10000)
MOD = 10 ** 9 + 7

n, m = map(int, input().split())
g = [input() for _ in range(n)]


@lru_cache(maxsize=None)
def f(i, j):
    if i < 0 or j < 0 or g[i][j] == '#':
        return 0
    if i == 0 and j == 0:
        return 1
    return (f(i - 1, j) + f(i, j - 1)) % MOD


# warm the cache diagonal by diagonal to keep the recursion shallow
for s in range(n + m - 1):
    for i in range(max(0, s - m + 1), min(n, s + 1)):
        f(i, s - i)
print(f(n - 1, m - 1))
