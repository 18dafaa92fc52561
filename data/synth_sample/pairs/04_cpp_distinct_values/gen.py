import random
import sys

k = int(sys.stdin.read())
rng = random.Random(500 + k)
n, distinct = [(30000, 12000), (35000, 10000), (30000, 15000), (40000, 8000)][k]
pool = [rng.randint(-10**9, 10**9) for _ in range(distinct)]
print(n)
print(" ".join(str(rng.choice(pool)) for _ in range(n)))
