import sys
from collections import Counter

data = sys.stdin.read().split()
n = int(data[0])
ids = data[1:n + 1]
total = Counter(ids)
# number of *other* visits of the same person
print("\n".join(str(total[x] - 1) for x in ids))
