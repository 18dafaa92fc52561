n = int(input())
L = []
R = []
for i in range(n):
    l, r = map(int, input().split())
    L.append(l)
    R.append(r)
ans = 0
for i in range(n):
    t = L[i]
    c = 0
    for j in range(n):
        if L[j] <= t < R[j]:
            c += 1
    ans = max(ans, c)
print(ans)
