from bisect import bisect_left
from itertools import accumulate

n, s = map(int, input().split())
a = list(map(int, input().split()))
p = [0] + list(accumulate(a))
ans = 0
for r in range(1, n + 1):
    ans += r - bisect_left(p, p[r] - s, 0, r)
print(ans)
