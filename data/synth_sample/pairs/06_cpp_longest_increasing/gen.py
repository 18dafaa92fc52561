import random
import sys

k = int(sys.stdin.read())
rng = random.Random(600 + k)
n = [12000, 14000, 15000, 13000][k]
print(n)
print(" ".join(str(rng.randint(0, 10**9)) for _ in range(n)))
