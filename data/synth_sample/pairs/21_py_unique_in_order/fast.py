import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
print(" ".join(dict.fromkeys(x.decode() for x in data[1:1 + n])))
