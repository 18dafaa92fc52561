import sys
from math import isqrt

input = sys.stdin.readline


def main():
    n, q = map(int, input().split())
    a = list(map(int, input().split()))
    B = max(1, isqrt(n))
    blocks = [sum(a[i:i + B]) for i in range(0, n, B)]
    res = []
    for _ in range(q):
        t, x, y = map(int, input().split())
        if t == 1:
            x -= 1
            blocks[x // B] += y - a[x]
            a[x] = y
        else:
            l, r = x - 1, y - 1
            bl, br = l // B, r // B
            if bl == br:
                res.append(sum(a[l:r + 1]))
            else:
                s = sum(a[l:(bl + 1) * B]) + sum(blocks[bl + 1:br]) + sum(a[br * B:r + 1])
                res.append(s)
    print("\n".join(map(str, res)))


main()
