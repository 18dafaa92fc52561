import sys
from collections import deque

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
t = [0] + list(map(int, data[2:2 + n]))
g = [[] for _ in range(n + 1)]
deg = [0] * (n + 1)
for i in range(m):
    a = int(data[2 + n + 2 * i]); b = int(data[3 + n + 2 * i])
    g[a].append(b)
    deg[b] += 1
dp = [0] * (n + 1)
q = deque([v for v in range(1, n + 1) if deg[v] == 0])
while q:
    v = q.popleft()
    dp[v] += t[v]
    for u in g[v]:
        dp[u] = max(dp[u], dp[v])
        deg[u] -= 1
        if deg[u] == 0:
            q.append(u)
print(max(dp))
