#include <bits/stdc++.h>
using namespace std;
using ll = long long;

int n, m;
vector<int> g[10005];
ll t[10005], dp[10005];
int color[10005];
bool cyc = false;

// dp[v] = longest chain of work that starts with task v
ll dfs(int v) {
    if (color[v] == 2) return dp[v];
    if (color[v] == 1) {
        cyc = true;
        return 0;
    }
    color[v] = 1;
    ll best = 0;
    for (int u : g[v]) {
        best = max(best, dfs(u));
        if (cyc) return 0;
    }
    color[v] = 2;
    return dp[v] = best + t[v];
}

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    cin >> n >> m;
    for (int i = 1; i <= n; i++) cin >> t[i];
    for (int i = 0; i < m; i++) {
        int a, b;
        cin >> a >> b;
        g[a].push_back(b);
    }
    ll ans = 0;
    for (int i = 1; i <= n && !cyc; i++) ans = max(ans, dfs(i));
    if (cyc) cout << -1 << "\n";
    else cout << ans << "\n";
}
