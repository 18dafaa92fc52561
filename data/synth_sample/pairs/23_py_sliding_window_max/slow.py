n, w = map(int, input().split())
a = list(map(int, input().split()))
maxima = []
for i in range(n - w + 1):
    m = a[i]
    for j in range(i + 1, i + w):
        if a[j] > m:
            m = a[j]
    maxima.append(m)
print(" ".join(str(m) for m in maxima))
