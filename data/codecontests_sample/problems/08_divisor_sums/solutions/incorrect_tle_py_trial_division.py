n = int(input())
a = list(map(int, input().split()))
total = 0
for x in a:
    d = 1
    while d * d <= x:
        if x % d == 0:
            total += d
            if d * d != x:
                total += x // d
        d += 1
print(total)
