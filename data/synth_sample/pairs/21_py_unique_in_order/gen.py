import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2100 + k)
n = [7000, 7500, 8000, 7200][k]
print(n)
print(" ".join(str(rng.randint(1, 4 * n)) for _ in range(n)))
