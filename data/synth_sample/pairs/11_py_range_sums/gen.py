import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1100 + k)
n, q = [(4000, 1200), (4500, 1100), (5000, 1000), (4000, 1300)][k]
out = [f"{n} {q}", " ".join(str(rng.randint(-1000, 1000)) for _ in range(n))]
for _ in range(q):
    l = rng.randint(1, n)
    out.append(f"{l} {rng.randint(l, n)}")
print("\n".join(out))
