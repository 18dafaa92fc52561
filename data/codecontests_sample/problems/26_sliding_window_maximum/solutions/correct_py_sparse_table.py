import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    row = list(map(int, data[2:2 + n]))
    # the window maximum equals the max of two overlapping power-of-two blocks
    p = 1
    while 2 * p <= k:
        row = [x if x > y else y for x, y in zip(row, row[p:])]
        p *= 2
    res = [max(row[i], row[i + k - p]) for i in range(n - k + 1)]
    sys.stdout.write(" ".join(map(str, res)) + "\n")


main()
