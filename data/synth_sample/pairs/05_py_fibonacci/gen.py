import sys

k = int(sys.stdin.read())
print([28, 29, 30, 29][k])
