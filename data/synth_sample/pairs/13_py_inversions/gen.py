import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1300 + k)
n = [1300, 1400, 1500, 1350][k]
print(n)
print(" ".join(str(rng.randint(0, 10**5)) for _ in range(n)))
