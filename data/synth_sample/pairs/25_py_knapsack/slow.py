n, cap = map(int, input().split())
items = [tuple(map(int, input().split())) for _ in range(n)]
best = 0
for mask in range(1 << n):  # every subset
    weight = value = 0
    for i in range(n):
        if mask >> i & 1:
            weight += items[i][0]
            value += items[i][1]
    if weight <= cap and value > best:
        best = value
print(best)
