import sys

input = sys.stdin.readline
n, q = map(int, input().split())
a = [0] + list(map(int, input().split()))
out = []
for _ in range(q):
    t, x, y = map(int, input().split())
    if t == 1:
        a[x] = y
    else:
        s = 0
        for i in range(x, y + 1):
            s += a[i]
        out.append(str(s))
print("\n".join(out))
