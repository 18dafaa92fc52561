import sys
from collections import Counter

data = sys.stdin.buffer.read().split()
n = int(data[0])
counts = Counter(map(int, data[1:1 + n]))
value, count = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
print(value, count)
