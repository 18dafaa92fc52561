#include <array>
#include <queue>
#include <string>
#include <vector>

// Shortest path length from (sr, sc) to (tr, tc) on a grid of '.' and '#', or -1.
int grid_distance(const std::vector<std::string>& grid, int sr, int sc, int tr, int tc) {
    const int h = grid.size(), w = grid[0].size();
    std::vector<int> dist(h * w, -1);
    std::queue<int> q;
    dist[sr * w + sc] = 0;
    q.push(sr * w + sc);
    const std::array<int, 4> dr{1, -1, 0, 0}, dc{0, 0, 1, -1};
    while (!q.empty()) {
        int cur = q.front(); q.pop();
        int r = cur / w, c = cur % w;
        if (r == tr && c == tc) return dist[cur];
        for (int d = 0; d < 4; ++d) {
            int nr = r + dr[d], nc = c + dc[d];
            if (nr < 0 || nc < 0 || nr >= h || nc >= w || grid[nr][nc] == '#') continue;
            if (dist[nr * w + nc] != -1) continue;
            dist[nr * w + nc] = dist[cur] + 1;
            q.push(nr * w + nc);
        }
    }
    return -1;
}
