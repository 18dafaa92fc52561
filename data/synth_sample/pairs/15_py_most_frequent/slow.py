n = int(input())
a = [int(x) for x in input().split()]
best_value, best_count = None, 0
for x in a:
    c = 0
    for y in a:
        if y == x:
            c += 1
    if c > best_count or (c == best_count and x < best_value):
        best_value, best_count = x, c
print(best_value, best_count)
