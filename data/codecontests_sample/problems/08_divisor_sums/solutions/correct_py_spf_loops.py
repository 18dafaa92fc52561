n = int(input())
a = list(map(int, input().split()))
M = max(a)
spf = [0] * (M + 1)
for i in range(2, M + 1):
    if spf[i] == 0:
        for j in range(i, M + 1, i):
            if spf[j] == 0:
                spf[j] = i


def sigma(x):
    res = 1
    while x > 1:
        p = spf[x]
        cur = 1
        pw = 1
        while x % p == 0:
            x //= p
            pw *= p
            cur += pw
        res *= cur
    return res


print(sum(sigma(x) for x in a))
