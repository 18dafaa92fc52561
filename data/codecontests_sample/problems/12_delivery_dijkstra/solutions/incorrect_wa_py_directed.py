import sys
import heapq


def main():
    it = iter(sys.stdin.buffer.read().split())
    n = int(next(it)); m = int(next(it))
    g = [[] for _ in range(n + 1)]
    for _ in range(m):
        u = int(next(it)); v = int(next(it)); w = int(next(it))
        g[u].append((v, w))
    dist = [-1] * (n + 1)
    h = [(0, 1)]
    while h:
        d, v = heapq.heappop(h)
        if dist[v] != -1:
            continue
        dist[v] = d
        for u, w in g[v]:
            if dist[u] == -1:
                heapq.heappush(h, (d + w, u))
    print(' '.join(map(str, dist[1:])))


main()
