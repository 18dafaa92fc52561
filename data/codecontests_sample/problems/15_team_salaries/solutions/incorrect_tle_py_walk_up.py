import sys
from collections import deque
input = sys.stdin.readline

n = int(input())
a = [0] + list(map(int, input().split()))
g = [[] for _ in range(n + 1)]
for _ in range(n - 1):
    u, v = map(int, input().split())
    g[u].append(v)
    g[v].append(u)
par = [-1] * (n + 1)
par[1] = 0
dq = deque([1])
while dq:
    v = dq.popleft()
    for u in g[v]:
        if par[u] == -1:
            par[u] = v
            dq.append(u)
ans = [0] * (n + 1)
for v in range(1, n + 1):
    x = v
    while x:
        ans[x] += a[v]
        x = par[x]
print(*ans[1:])
