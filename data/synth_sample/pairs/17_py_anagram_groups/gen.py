import random
import sys

k = int(sys.stdin.read())
rng = random.Random(1700 + k)
n, bases = [(1300, 350), (1400, 400), (1500, 380), (1350, 420)][k]
roots = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(4, 8))) for _ in range(bases)]
words = []
for _ in range(n):
    letters = list(rng.choice(roots))
    rng.shuffle(letters)
    words.append("".join(letters))
print(n)
print("\n".join(words))
