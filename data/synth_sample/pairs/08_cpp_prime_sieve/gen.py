import sys

k = int(sys.stdin.read())
print([1000000, 1300000, 1200000, 900000][k])
