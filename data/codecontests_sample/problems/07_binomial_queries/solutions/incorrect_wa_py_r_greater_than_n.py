import sys
MOD = 10 ** 9 + 7
data = sys.stdin.buffer.read().split()
q = int(data[0])
N = 200000
fact = [1] * (N + 1)
for i in range(1, N + 1):
    fact[i] = fact[i - 1] * i % MOD
inv = [1] * (N + 1)
inv[N] = pow(fact[N], MOD - 2, MOD)
for i in range(N, 0, -1):
    inv[i - 1] = inv[i] * i % MOD
out = []
for k in range(q):
    n = int(data[1 + 2 * k]); r = int(data[2 + 2 * k])
    out.append(fact[n] * inv[r] % MOD * inv[n - r] % MOD)
print("\n".join(map(str, out)))
