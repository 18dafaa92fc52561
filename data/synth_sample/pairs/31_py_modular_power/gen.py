import random
import sys

k = int(sys.stdin.read())
rng = random.Random(3100 + k)
q = [4, 5, 6, 4][k]
print(q)
for _ in range(q):
    m = rng.randint(2, 10**9)
    print(rng.randint(0, m - 1), rng.randint(200000, 400000), m)
