import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2300 + k)
n, w = [(6000, 250), (7000, 200), (6500, 230), (8000, 180)][k]
print(n, w)
print(" ".join(str(rng.randint(0, 10**6)) for _ in range(n)))
