import sys
sys.setrecursionlimit(200000)
MOD = 10 ** 9 + 7

n, x = map(int, input().split())
coins = sorted(map(int, input().split()), reverse=True)


def count(i, rest):
    if rest == 0:
        return 1
    if i == n:
        return 0
    total = 0
    k = 0
    while k * coins[i] <= rest:
        total += count(i + 1, rest - k * coins[i])
        k += 1
    return total % MOD


print(count(0, x))
