import sys
sys.setrecursionlimit(10000)

n, m = map(int, input().split())
g = [input() for _ in range(n)]
count = 0


def go(i, j):
    global count
    if i >= n or j >= m or g[i][j] == '#':
        return
    if i == n - 1 and j == m - 1:
        count += 1
        return
    go(i + 1, j)
    go(i, j + 1)


go(0, 0)
print(count % (10 ** 9 + 7))
