n = int(input())
a = list(map(int, input().split()))
nxt = [n] * n
for i in range(n - 2, -1, -1):
    j = i + 1
    while j < n and a[j] <= a[i]:
        j = nxt[j]
    nxt[i] = j
for i in range(n):
    print(nxt[i] + 1 if nxt[i] < n else -1, end=" ")
print()
