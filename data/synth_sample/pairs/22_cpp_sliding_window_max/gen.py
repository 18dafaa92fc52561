import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2200 + k)
n, w = [(30000, 3000), (35000, 2500), (40000, 2000), (30000, 3500)][k]
print(n, w)
print(" ".join(str(rng.randint(0, 10**9)) for _ in range(n)))
