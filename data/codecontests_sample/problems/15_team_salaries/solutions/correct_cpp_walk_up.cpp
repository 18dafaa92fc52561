#include <bits/stdc++.h>
using namespace std;
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    vector<long long> a(n + 1), ans(n + 1, 0);
    for (int i = 1; i <= n; i++) cin >> a[i];
    vector<vector<int>> g(n + 1);
    for (int i = 1; i < n; i++) {
        int u, v;
        cin >> u >> v;
        g[u].push_back(v);
        g[v].push_back(u);
    }
    vector<int> p(n + 1, -1);
    p[1] = 0;
    queue<int> q;
    q.push(1);
    while (!q.empty()) {
        int v = q.front();
        q.pop();
        for (int u : g[v])
            if (p[u] == -1) {
                p[u] = v;
                q.push(u);
            }
    }
    // every employee adds his salary to himself and all his bosses
    for (int v = 1; v <= n; v++)
        for (int x = v; x != 0; x = p[x]) ans[x] += a[v];
    for (int i = 1; i <= n; i++) cout << ans[i] << " \n"[i == n];
}
