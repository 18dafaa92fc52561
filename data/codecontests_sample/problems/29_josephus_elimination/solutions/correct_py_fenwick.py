import sys


def main():
    n, k = map(int, sys.stdin.readline().split())
    tree = [0] * (n + 1)
    for i in range(1, n + 1):
        tree[i] += 1
        j = i + (i & -i)
        if j <= n:
            tree[j] += tree[i]
    top = 1
    while top * 2 <= n:
        top *= 2
    res = []
    idx = 0
    for alive in range(n, 0, -1):
        idx = (idx + k - 1) % alive
        # find the (idx+1)-th remaining child
        pos, rem, step = 0, idx + 1, top
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        pos += 1
        res.append(pos)
        while pos <= n:
            tree[pos] -= 1
            pos += pos & -pos
    print(" ".join(map(str, res)))


main()
