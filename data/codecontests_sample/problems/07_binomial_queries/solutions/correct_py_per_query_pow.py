import sys
input = sys.stdin.readline
MOD = 10**9 + 7

q = int(input())
qs = [list(map(int, input().split())) for _ in range(q)]
top = max(x[0] for x in qs)
f = [1] * (top + 1)
for i in range(2, top + 1):
    f[i] = f[i - 1] * i % MOD
ans = []
for n, r in qs:
    if r > n:
        ans.append("0")
        continue
    d = f[r] * f[n - r] % MOD
    ans.append(str(f[n] * pow(d, MOD - 2, MOD) % MOD))
print("\n".join(ans))
