n = int(input())
# every d <= n divides exactly n // d numbers in 1..n
print(sum(d * (n // d) for d in range(1, n + 1)))
