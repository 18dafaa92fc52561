import random
import sys

k = int(sys.stdin.read())
rng = random.Random(300 + k)
n, q = [(15000, 20000), (18000, 20000), (20000, 15000), (15000, 25000)][k]
out = [f"{n} {q}", " ".join(str(rng.randint(-10**6, 10**6)) for _ in range(n))]
for _ in range(q):
    l = rng.randint(1, n)
    r = rng.randint(l, n)
    out.append(f"{l} {r}")
sys.stdout.write("\n".join(out) + "\n")
