import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, s = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    ans = 0
    cur = 0
    l = 0
    for r in range(n):
        cur += a[r]
        while cur > s:
            cur -= a[l]
            l += 1
        ans += r - l + 1
    print(ans)


main()
