#include <iostream>
#include <map>
#include <queue>
#include <string>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<string> a(n);
    for (int i = 0; i < n; i++) cin >> a[i];
    pair<int, int> st, en;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (a[i][j] == 'S') st = {i, j};
            if (a[i][j] == 'T') en = {i, j};
        }
    map<pair<int, int>, int> dist;
    queue<pair<int, int>> q;
    dist[st] = 0;
    q.push(st);
    int dx[] = {1, -1, 0, 0};
    int dy[] = {0, 0, 1, -1};
    while (!q.empty()) {
        pair<int, int> cur = q.front();
        q.pop();
        for (int k = 0; k < 4; k++) {
            int x = cur.first + dx[k], y = cur.second + dy[k];
            if (x < 0 || y < 0 || x >= n || y >= m) continue;
            if (a[x][y] == '#') continue;
            if (dist.count({x, y})) continue;
            dist[{x, y}] = dist[cur] + 1;
            q.push({x, y});
        }
    }
    if (dist.count(en)) cout << dist[en] << endl;
    else cout << -1 << endl;
    return 0;
}
