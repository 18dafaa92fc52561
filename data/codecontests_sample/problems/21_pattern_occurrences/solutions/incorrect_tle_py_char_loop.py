t = input()
p = input()
n, m = len(t), len(p)
ans = 0
for i in range(n - m + 1):
    ok = True
    for j in range(m):
        if t[i + j] != p[j]:
            ok = False
            break
    if ok:
        ans += 1
print(ans)
