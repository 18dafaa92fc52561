import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2600 + k)
h, w, q = [(300, 300, 6000), (350, 300, 5000), (300, 350, 6500), (320, 320, 5500)][k]
out = [f"{h} {w} {q}"]
for _ in range(h):
    out.append(" ".join(str(rng.randint(-1000, 1000)) for _ in range(w)))
for _ in range(q):
    r1, r2 = sorted(rng.randint(1, h) for _ in range(2))
    c1, c2 = sorted(rng.randint(1, w) for _ in range(2))
    out.append(f"{r1} {c1} {r2} {c2}")
sys.stdout.write("\n".join(out) + "\n")
