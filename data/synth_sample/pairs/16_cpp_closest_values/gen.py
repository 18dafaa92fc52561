import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1600 + k)
n = [8000, 9000, 10000][k]
print(n)
print(" ".join(str(rng.randint(-10**9, 10**9)) for _ in range(n)))
