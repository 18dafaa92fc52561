import random
import sys

k = int(sys.stdin.read())
rng = random.Random(2400 + k)
n, s = [(600, 100000), (700, 90000), (500, 120000)][k]
print(n, s)
print(" ".join(str(rng.randint(s // 400, s // 20)) for _ in range(n)))
