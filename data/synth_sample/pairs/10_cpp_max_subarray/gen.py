import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1000 + k)
n = [15000, 18000, 20000, 16000][k]
print(n)
print(" ".join(str(rng.randint(-10**6, 10**6)) for _ in range(n)))
