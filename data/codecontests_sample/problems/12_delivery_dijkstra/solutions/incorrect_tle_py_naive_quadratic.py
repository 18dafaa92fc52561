import sys
input = sys.stdin.readline

n, m = map(int, input().split())
adj = [[] for _ in range(n + 1)]
for _ in range(m):
    u, v, w = map(int, input().split())
    adj[u].append((v, w))
    adj[v].append((u, w))
INF = 10 ** 30
dist = [INF] * (n + 1)
vis = [False] * (n + 1)
dist[1] = 0
for _ in range(n):
    v = -1
    for i in range(1, n + 1):
        if not vis[i] and (v == -1 or dist[i] < dist[v]):
            v = i
    if dist[v] == INF:
        break
    vis[v] = True
    for u, w in adj[v]:
        if dist[v] + w < dist[u]:
            dist[u] = dist[v] + w
print(' '.join(str(d) if d < INF else '-1' for d in dist[1:]))
