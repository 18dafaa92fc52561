import sys
from collections import deque


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = [0] + [int(x) for x in data[2:2 + n]]
    adj = [[] for _ in range(n + 1)]
    indeg = [0] * (n + 1)
    p = 2 + n
    for _ in range(m):
        a = int(data[p]); b = int(data[p + 1]); p += 2
        adj[a].append(b)
        indeg[b] += 1
    start = [0] * (n + 1)
    q = deque(i for i in range(1, n + 1) if indeg[i] == 0)
    seen = 0
    ans = 0
    while q:
        v = q.popleft()
        seen += 1
        end = start[v] + t[v]
        if end > ans:
            ans = end
        for u in adj[v]:
            if start[u] < end:
                start[u] = end
            indeg[u] -= 1
            if indeg[u] == 0:
                q.append(u)
    print(ans if seen == n else -1)


main()
