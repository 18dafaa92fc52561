import sys

data = sys.stdin.buffer.read().split()
n, d = int(data[0]), int(data[1])
values = set(map(int, data[2:2 + n]))
print(sum(1 for x in values if x + d in values))
