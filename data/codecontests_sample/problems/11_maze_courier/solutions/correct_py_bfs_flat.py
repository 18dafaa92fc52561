import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); m = int(data[1])
    W = m + 2
    # bordered flat grid: True where the cell is free
    free = bytearray(W * (n + 2))
    s = t = -1
    for i in range(n):
        row = data[2 + i]
        base = (i + 1) * W + 1
        for j, ch in enumerate(row):
            if ch != 35:  # '#'
                free[base + j] = 1
        p = row.find(b'S')
        if p >= 0:
            s = base + p
        p = row.find(b'T')
        if p >= 0:
            t = base + p
    dist = [-1] * len(free)
    dist[s] = 0
    q = [s]
    free[s] = 0
    for v in q:
        if v == t:
            break
        nd = dist[v] + 1
        for u in (v + 1, v - 1, v + W, v - W):
            if free[u]:
                free[u] = 0
                dist[u] = nd
                q.append(u)
    print(dist[t])


main()
