M = 1000000007
q = int(input())
qs = []
for _ in range(q):
    n, r = map(int, input().split())
    qs.append((n, r))
N = max(n for n, r in qs)
fac = [1]
for i in range(1, N + 1):
    fac.append(fac[-1] * i % M)
ifac = [pow(x, M - 2, M) for x in fac]
for n, r in qs:
    if r > n:
        print(0)
    else:
        print(fac[n] * ifac[r] * ifac[n - r] % M)
