import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2900 + k)
n, d = [(1000, 3), (1100, 7), (1050, 2), (1150, 5)][k]
print(n, d)
print(" ".join(map(str, rng.sample(range(1, 5 * n), n))))
