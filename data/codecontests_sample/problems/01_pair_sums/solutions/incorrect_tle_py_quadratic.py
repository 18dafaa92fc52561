n, k = map(int, input().split())
a = list(map(int, input().split()))
cnt = 0
for i in range(n):
    ai = a[i]
    for j in range(i + 1, n):
        if ai + a[j] <= k:
            cnt += 1
print(cnt)
