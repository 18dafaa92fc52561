import sys
from collections import defaultdict

input = sys.stdin.readline
n = int(input())
seen = defaultdict(int)
ans = 0
for _ in range(n):
    key = "".join(sorted(input().strip()))
    ans += seen[key]
    seen[key] += 1
print(ans)
