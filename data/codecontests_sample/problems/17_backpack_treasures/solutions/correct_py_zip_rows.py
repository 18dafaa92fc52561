import sys


def solve():
    data = sys.stdin.buffer.read().split()
    n, W = int(data[0]), int(data[1])
    dp = [0] * (W + 1)
    for i in range(n):
        w = int(data[2 + 2 * i])
        v = int(data[3 + 2 * i])
        if w > W:
            continue
        # dp[c] for c >= w is rebuilt from the previous row in one pass
        dp[w:] = [a if a > b + v else b + v for a, b in zip(dp[w:], dp)]
    return dp[W]


print(solve())
