import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1500 + k)
n = [1500, 1600, 1700, 1550][k]
print(n)
print(" ".join(str(rng.randint(1, 300)) for _ in range(n)))
