import heapq

n, k = map(int, input().split())
a = list(map(int, input().split()))
heap = []
ans = []
for i in range(n):
    heapq.heappush(heap, (-a[i], i))
    if i >= k - 1:
        while heap[0][1] <= i - k:
            heapq.heappop(heap)
        ans.append(-heap[0][0])
print(*ans)
