n, m = map(int, input().split())
t = list(map(int, input().split()))
t.sort()
lo = 1
hi = t[0] * m
while lo < hi:
    mid = (lo + hi) // 2
    made = 0
    for x in t:
        if x > mid:
            break
        made += mid // x
        if made >= m:
            break
    if made >= m:
        hi = mid
    else:
        lo = mid + 1
print(lo)
