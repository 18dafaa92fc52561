import sys

sys.setrecursionlimit(100000)


def build(v, l, r):
    cnt[v] = r - l + 1
    if l < r:
        m = (l + r) // 2
        build(2 * v, l, m)
        build(2 * v + 1, m + 1, r)


def take(v, l, r, k):
    # remove and return the k-th (0-based) remaining child in [l, r]
    cnt[v] -= 1
    if l == r:
        return l
    m = (l + r) // 2
    if k < cnt[2 * v]:
        return take(2 * v, l, m, k)
    return take(2 * v + 1, m + 1, r, k - cnt[2 * v])


n, k = map(int, input().split())
cnt = [0] * (4 * n)
build(1, 1, n)
ans = []
cur = 0
for size in range(n, 0, -1):
    cur = (cur + k - 1) % size
    ans.append(take(1, 1, n, cur))
print(*ans)
