n, k = map(int, input().split())
alive = [True] * n
res = []
pos = -1
for left in range(n, 0, -1):
    steps = (k - 1) % left + 1
    while steps:
        pos = (pos + 1) % n
        if alive[pos]:
            steps -= 1
    alive[pos] = False
    res.append(pos + 1)
print(*res)
