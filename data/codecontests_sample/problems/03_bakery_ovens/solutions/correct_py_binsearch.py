import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = list(map(int, data[2:2 + n]))
    lo, hi = 0, min(t) * m
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(mid // x for x in t) >= m:
            hi = mid
        else:
            lo = mid
    print(hi)


main()
