import sys
from bisect import bisect_left, bisect_right, insort

data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:n + 1]))
sorted_seen = []
res = []
for x in a:
    res.append(bisect_right(sorted_seen, x) - bisect_left(sorted_seen, x))
    insort(sorted_seen, x)
print("\n".join(map(str, res)))
