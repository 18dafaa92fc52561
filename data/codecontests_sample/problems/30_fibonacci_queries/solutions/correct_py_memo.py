import sys

sys.setrecursionlimit(10000)
MOD = 10 ** 9 + 7
memo = {0: 0, 1: 1, 2: 1}


def F(n):
    if n in memo:
        return memo[n]
    k = n // 2
    if n % 2 == 0:
        # F(2k) = F(k) * (2F(k+1) - F(k)) = F(k) * (F(k) + 2F(k-1))
        fk = F(k)
        r = fk * (fk + 2 * F(k - 1)) % MOD
    else:
        # F(2k+1) = F(k)^2 + F(k+1)^2
        r = (F(k) ** 2 + F(k + 1) ** 2) % MOD
    memo[n] = r
    return r


t = int(sys.stdin.readline())
out = []
for _ in range(t):
    out.append(F(int(sys.stdin.readline())))
print("\n".join(map(str, out)))
