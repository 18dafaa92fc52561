n, t = map(int, input().split())
a = list(map(int, input().split()))
pairs = 0
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == t:
            pairs += 1
print(pairs)
