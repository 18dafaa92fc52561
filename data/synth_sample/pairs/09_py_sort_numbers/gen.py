import random
import sys

k = int(sys.stdin.read())
rng = random.Random(900 + k)
n = [1400, 1600, 1700, 1500][k]
print(n)
print(" ".join(str(rng.randint(-10**6, 10**6)) for _ in range(n)))
