import random
import sys

k = int(sys.stdin.read())
rng = random.Random(100 + k)
n = [18000, 22000, 25000, 20000][k]
t = rng.randint(500, 1500)
print(n, t)
print(" ".join(str(rng.randint(0, 1500)) for _ in range(n)))
