import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1400 + k)
n, m = [(150000, 1000), (200000, 800), (180000, 1200), (160000, 900)][k]
# mostly 'a' so that the naive comparison scans far before a mismatch
t = "".join("a" if rng.random() < 0.999 else "b" for _ in range(n))
print(t)
print("a" * (m - 1) + "b")
