import sys
input = sys.stdin.readline

n = int(input())
a = [0] + list(map(int, input().split()))
par = [0] * (n + 1)
for _ in range(n - 1):
    u, v = map(int, input().split())
    par[v] = u          # the boss is written first
indeg = [0] * (n + 1)
for v in range(2, n + 1):
    indeg[par[v]] += 1
res = a[:]
stack = [v for v in range(1, n + 1) if indeg[v] == 0]
while stack:
    v = stack.pop()
    p = par[v]
    if p:
        res[p] += res[v]
        indeg[p] -= 1
        if indeg[p] == 0:
            stack.append(p)
print(*res[1:])
