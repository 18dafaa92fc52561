import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
present = set(data[1:1 + n])
q = int(data[1 + n])
queries = data[2 + n:2 + n + q]
print(" ".join("1" if x in present else "0" for x in queries))
