import sys
from itertools import accumulate
from operator import add

MOD = 10 ** 9 + 7


def main():
    data = sys.stdin.buffer.read().split()
    n, x = int(data[0]), int(data[1])
    dp = [0] * (x + 1)
    dp[0] = 1
    done = 0
    for c in map(int, data[2:2 + n]):
        if c > x:
            continue
        if c * c <= x:
            # small coin: prefix sums along each residue class modulo c
            for r in range(c):
                dp[r::c] = list(accumulate(dp[r::c]))
        else:
            # big coin: add the previous block of length c to the current one
            for s in range(c, x + 1, c):
                dp[s:s + c] = map(add, dp[s:s + c], dp[s - c:s])
        done += 1
        if done % 3 == 0:
            dp = [v % MOD for v in dp]
    print(dp[x] % MOD)


main()
