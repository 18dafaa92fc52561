#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int n, m;
    cin >> n >> m;
    vector<int> t(n + 1), in(n + 1), f(n + 1);
    for (int i = 1; i <= n; i++) cin >> t[i];
    vector<vector<int>> g(n + 1);
    for (int i = 0; i < m; i++) {
        int a, b;
        cin >> a >> b;
        g[a].push_back(b);
        in[b]++;
    }
    queue<int> q;
    for (int i = 1; i <= n; i++)
        if (!in[i]) q.push(i);
    int cnt = 0, ans = 0;
    while (!q.empty()) {
        int v = q.front();
        q.pop();
        cnt++;
        f[v] += t[v];
        ans = max(ans, f[v]);
        for (int u : g[v]) {
            f[u] = max(f[u], f[v]);
            if (--in[u] == 0) q.push(u);
        }
    }
    if (cnt < n) ans = -1;
    cout << ans << '\n';
}
