import sys
from bisect import bisect_right

input = sys.stdin.readline
n = int(input())
a = list(map(int, input().split()))
d = []
for x in a:
    p = bisect_right(d, x)
    if p == len(d):
        d.append(x)
    else:
        d[p] = x
print(len(d))
