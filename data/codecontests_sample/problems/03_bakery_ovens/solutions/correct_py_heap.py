import heapq

n, m = map(int, input().split())
t = list(map(int, input().split()))
heap = [(x, x) for x in t]
heapq.heapify(heap)
ans = 0
for _ in range(m):
    ans, p = heap[0]
    heapq.heapreplace(heap, (ans + p, p))
print(ans)
