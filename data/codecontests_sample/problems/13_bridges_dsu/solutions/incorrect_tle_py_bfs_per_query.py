import sys
from collections import deque
input = sys.stdin.readline

n, q = map(int, input().split())
adj = [[] for _ in range(n + 1)]
res = []
for _ in range(q):
    c, u, v = input().split()
    u = int(u); v = int(v)
    if c == '+':
        adj[u].append(v)
        adj[v].append(u)
        continue
    seen = [False] * (n + 1)
    seen[u] = True
    dq = deque([u])
    while dq:
        x = dq.popleft()
        for y in adj[x]:
            if not seen[y]:
                seen[y] = True
                dq.append(y)
    res.append("YES" if seen[v] else "NO")
print("\n".join(res))
