import sys

data = sys.stdin.read().split()
n = int(data[0])
keys = [sorted(w) for w in data[1:n + 1]]
ans = 0
for i in range(n):
    ki = keys[i]
    for j in range(i + 1, n):
        if keys[j] == ki:
            ans += 1
print(ans)
