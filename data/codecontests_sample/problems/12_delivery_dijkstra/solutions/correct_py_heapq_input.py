import heapq

n, m = map(int, input().split())
graph = {}
for i in range(1, n + 1):
    graph[i] = []
for _ in range(m):
    a, b, c = map(int, input().split())
    graph[a].append([b, c])
    graph[b].append([a, c])

dist = [-1] * (n + 1)
done = [False] * (n + 1)
heap = [[0, 1]]
while heap:
    d, v = heapq.heappop(heap)
    if done[v]:
        continue
    done[v] = True
    dist[v] = d
    for to, c in graph[v]:
        if not done[to]:
            heapq.heappush(heap, [d + c, to])

print(*dist[1:])
