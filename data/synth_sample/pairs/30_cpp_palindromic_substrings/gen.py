import random
import sys

k = int(sys.stdin.read())
rng = random.Random(3000 + k)
n = [6000, 7000, 8000, 6500][k]
print("".join(rng.choice("ab") for _ in range(n)))
