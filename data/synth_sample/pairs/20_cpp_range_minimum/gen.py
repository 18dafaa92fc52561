import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2000 + k)
n, q = [(20000, 20000), (25000, 18000), (22000, 22000), (20000, 25000)][k]
out = [f"{n} {q}", " ".join(str(rng.randint(-10**9, 10**9)) for _ in range(n))]
for _ in range(q):
    l = rng.randint(1, n)
    out.append(f"{l} {rng.randint(l, n)}")
sys.stdout.write("\n".join(out) + "\n")
