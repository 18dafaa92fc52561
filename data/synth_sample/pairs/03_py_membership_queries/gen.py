import random
import sys

k = int(sys.stdin.read())
rng = random.Random(400 + k)
n, q = [(2500, 1500), (2800, 1400), (2600, 1600), (3000, 1300)][k]
values = [rng.randint(0, 10**6) for _ in range(n)]
queries = [rng.choice(values) if rng.random() < 0.3 else rng.randint(0, 10**6) for _ in range(q)]
print(n)
print(" ".join(map(str, values)))
print(q)
print(" ".join(map(str, queries)))
