q = int(input())
for _ in range(q):
    a, b, m = map(int, input().split())
    result = 1 % m
    for _ in range(b):
        result = result * a % m
    print(result)
