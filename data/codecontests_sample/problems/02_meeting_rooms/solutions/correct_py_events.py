import sys
input = sys.stdin.readline

n = int(input())
ev = []
for _ in range(n):
    a, b = input().split()
    ev.append((int(a), 1))
    ev.append((int(b), -1))
# at equal times the -1 (end) sorts first, so touching meetings share a room
ev.sort()
cur = ans = 0
for _, d in ev:
    cur += d
    if cur > ans:
        ans = cur
print(ans)
