n = int(input())
total = 0
for i in range(1, n + 1):
    d = 1
    while d * d <= i:
        if i % d == 0:
            total += d
            if d * d != i:
                total += i // d
        d += 1
print(total)
