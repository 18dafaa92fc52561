import sys

MOD = 10 ** 9 + 7


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    rows = data[2:2 + n]
    dp = [0] * m
    dp[0] = 1
    for row in rows:
        left = 0
        for j in range(m):
            if row[j] == 35:  # '#'
                left = 0
            else:
                left = (left + dp[j]) % MOD
            dp[j] = left
    print(dp[m - 1])


main()
