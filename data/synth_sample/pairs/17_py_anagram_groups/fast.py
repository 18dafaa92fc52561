import sys
from collections import Counter

words = sys.stdin.read().split()[1:]
groups = Counter("".join(sorted(w)) for w in words)
print(len(groups), max(groups.values()))
