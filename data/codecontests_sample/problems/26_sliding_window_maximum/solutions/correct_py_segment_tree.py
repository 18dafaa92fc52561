import sys

sys.setrecursionlimit(10000)
input = sys.stdin.readline


def build(node, l, r):
    if l == r:
        tree[node] = a[l]
        return
    m = (l + r) // 2
    build(2 * node, l, m)
    build(2 * node + 1, m + 1, r)
    tree[node] = max(tree[2 * node], tree[2 * node + 1])


def query(node, l, r, ql, qr):
    if ql <= l and r <= qr:
        return tree[node]
    m = (l + r) // 2
    if qr <= m:
        return query(2 * node, l, m, ql, qr)
    if ql > m:
        return query(2 * node + 1, m + 1, r, ql, qr)
    return max(query(2 * node, l, m, ql, qr), query(2 * node + 1, m + 1, r, ql, qr))


n, k = map(int, input().split())
a = list(map(int, input().split()))
tree = [0] * (4 * n)
build(1, 0, n - 1)
ans = [query(1, 0, n - 1, i, i + k - 1) for i in range(n - k + 1)]
print(" ".join(map(str, ans)))
