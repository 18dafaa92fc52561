import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    # prefix maxima inside blocks of length k, suffix maxima inside the same blocks
    pre = a[:]
    suf = a[:]
    for i in range(1, n):
        if i % k and pre[i - 1] > pre[i]:
            pre[i] = pre[i - 1]
    for i in range(n - 2, -1, -1):
        if (i + 1) % k and suf[i + 1] > suf[i]:
            suf[i] = suf[i + 1]
    res = [max(suf[i], pre[i + k - 1]) for i in range(n - k + 1)]
    print(" ".join(map(str, res)))


main()
