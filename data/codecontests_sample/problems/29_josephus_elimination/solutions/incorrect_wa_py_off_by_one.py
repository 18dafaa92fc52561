n, k = map(int, input().split())
circle = list(range(1, n + 1))
i = 0
res = []
while circle:
    i = (i + k) % len(circle)
    res.append(circle.pop(i))
    if circle:
        i %= len(circle)
print(*res)
