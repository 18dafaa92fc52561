def is_prime(x):
    if x < 2:
        return False
    d = 2
    while d * d <= x:
        if x % d == 0:
            return False
        d += 1
    return True


q = int(input())
for _ in range(q):
    l, r = map(int, input().split())
    print(sum(1 for x in range(l, r + 1) if is_prime(x)))
