t = input().strip()
p = input().strip()
m = len(p)
fail = [0] * m
k = 0
for i in range(1, m):
    while k and p[i] != p[k]:
        k = fail[k - 1]
    if p[i] == p[k]:
        k += 1
    fail[i] = k
ans = 0
k = 0
for c in t:
    while k and c != p[k]:
        k = fail[k - 1]
    if c == p[k]:
        k += 1
        if k == m:
            ans += 1
            k = fail[k - 1]
print(ans)
