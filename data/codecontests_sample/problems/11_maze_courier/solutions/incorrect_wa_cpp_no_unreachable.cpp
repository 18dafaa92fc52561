#include <bits/stdc++.h>
using namespace std;
const int INF = 1e9;
int n, m;
string g[200005];
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    cin >> n >> m;
    for (int i = 0; i < n; i++) cin >> g[i];
    vector<vector<int>> d(n, vector<int>(m, INF));
    queue<pair<int, int>> q;
    int tx = 0, ty = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (g[i][j] == 'S') { d[i][j] = 0; q.push({i, j}); }
            if (g[i][j] == 'T') { tx = i; ty = j; }
        }
    while (!q.empty()) {
        auto [x, y] = q.front();
        q.pop();
        const int dx[] = {0, 0, 1, -1}, dy[] = {1, -1, 0, 0};
        for (int k = 0; k < 4; k++) {
            int a = x + dx[k], b = y + dy[k];
            if (a < 0 || b < 0 || a >= n || b >= m || g[a][b] == '#') continue;
            if (d[a][b] > d[x][y] + 1) {
                d[a][b] = d[x][y] + 1;
                q.push({a, b});
            }
        }
    }
    cout << d[tx][ty] << "\n";
}
