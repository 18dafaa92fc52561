n, s = map(int, input().split())
a = list(map(int, input().split()))
ans = 0
for l in range(n):
    cur = 0
    for r in range(l, n):
        cur += a[r]
        if cur > s:
            break
        ans += 1
print(ans)
