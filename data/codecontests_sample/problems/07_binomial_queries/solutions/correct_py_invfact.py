import sys

MOD = 10 ** 9 + 7


def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    vals = list(map(int, data[1:1 + 2 * q]))
    mx = max(vals[0::2])
    fact = [1] * (mx + 1)
    for i in range(1, mx + 1):
        fact[i] = fact[i - 1] * i % MOD
    inv = [1] * (mx + 1)
    inv[mx] = pow(fact[mx], MOD - 2, MOD)
    for i in range(mx, 0, -1):
        inv[i - 1] = inv[i] * i % MOD
    out = []
    for k in range(q):
        n = vals[2 * k]
        r = vals[2 * k + 1]
        if r > n:
            out.append(0)
        else:
            out.append(fact[n] * inv[r] % MOD * inv[n - r] % MOD)
    sys.stdout.write("\n".join(map(str, out)) + "\n")


main()
