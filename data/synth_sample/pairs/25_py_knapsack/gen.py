import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2500 + k)
n = [15, 16, 15, 16][k]
cap = rng.randint(100, 300)
print(n, cap)
for _ in range(n):
    print(rng.randint(10, 80), rng.randint(1, 100))
