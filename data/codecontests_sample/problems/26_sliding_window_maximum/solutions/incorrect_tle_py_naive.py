n, k = map(int, input().split())
a = list(map(int, input().split()))
res = []
for i in range(n - k + 1):
    best = a[i]
    for j in range(i + 1, i + k):
        if a[j] > best:
            best = a[j]
    res.append(best)
print(*res)
