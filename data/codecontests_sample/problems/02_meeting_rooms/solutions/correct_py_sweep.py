import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    starts = sorted(map(int, data[1:2 * n + 1:2]))
    ends = sorted(map(int, data[2:2 * n + 1:2]))
    best = cur = j = 0
    for s in starts:
        while ends[j] <= s:
            j += 1
            cur -= 1
        cur += 1
        if cur > best:
            best = cur
    print(best)


main()
