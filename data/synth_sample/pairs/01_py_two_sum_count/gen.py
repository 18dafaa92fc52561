import random
import sys

k = int(sys.stdin.read())
rng = random.Random(200 + k)
n = [1400, 1500, 1600, 1450][k]
t = rng.randint(-50, 50)
print(n, t)
print(" ".join(str(rng.randint(-100, 100)) for _ in range(n)))
