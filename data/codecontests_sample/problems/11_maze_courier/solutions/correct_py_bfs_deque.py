from collections import deque

n, m = map(int, input().split())
grid = []
for i in range(n):
    grid.append(input())

for i in range(n):
    for j in range(m):
        if grid[i][j] == 'S':
            start = (i, j)
        elif grid[i][j] == 'T':
            target = (i, j)

dist = [[-1] * m for _ in range(n)]
dist[start[0]][start[1]] = 0
dq = deque([start])
while dq:
    x, y = dq.popleft()
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        nx, ny = x + dx, y + dy
        if 0 <= nx < n and 0 <= ny < m and grid[nx][ny] != '#' and dist[nx][ny] == -1:
            dist[nx][ny] = dist[x][y] + 1
            dq.append((nx, ny))

print(dist[target[0]][target[1]])
