import sys

MOD = 10 ** 9 + 7
data = sys.stdin.read().split()
t = int(data[0])
res = []
for i in range(1, t + 1):
    n = int(data[i])
    a, b = 0, 1
    for _ in range(n):
        a, b = b, (a + b) % MOD
    res.append(a)
print("\n".join(map(str, res)))
