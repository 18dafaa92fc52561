import sys
input = sys.stdin.readline

n, m = map(int, input().split())
g = [input().strip() for _ in range(n)]
INF = float('inf')
d = [[INF] * m for _ in range(n)]
for i in range(n):
    for j in range(m):
        if g[i][j] == 'S':
            d[i][j] = 0
        if g[i][j] == 'T':
            ti, tj = i, j

# relax every cell from its neighbours until nothing changes
changed = True
while changed:
    changed = False
    for i in range(n):
        for j in range(m):
            if g[i][j] == '#':
                continue
            best = d[i][j]
            if i > 0 and d[i - 1][j] + 1 < best:
                best = d[i - 1][j] + 1
            if i + 1 < n and d[i + 1][j] + 1 < best:
                best = d[i + 1][j] + 1
            if j > 0 and d[i][j - 1] + 1 < best:
                best = d[i][j - 1] + 1
            if j + 1 < m and d[i][j + 1] + 1 < best:
                best = d[i][j + 1] + 1
            if best < d[i][j]:
                d[i][j] = best
                changed = True

print(d[ti][tj] if d[ti][tj] != INF else -1)
