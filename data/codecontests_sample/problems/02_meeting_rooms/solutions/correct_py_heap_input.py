import heapq

n = int(input())
meetings = []
for _ in range(n):
    l, r = map(int, input().split())
    meetings.append((l, r))
meetings.sort()
busy = []
for l, r in meetings:
    if busy and busy[0] <= l:
        heapq.heapreplace(busy, r)
    else:
        heapq.heappush(busy, r)
print(len(busy))
