import sys

data = sys.stdin.read().split()
t, p = data[0], data[1]
cnt = 0
pos = t.find(p)
while pos != -1:
    cnt += 1
    pos = t.find(p, pos + 1)
print(cnt)
