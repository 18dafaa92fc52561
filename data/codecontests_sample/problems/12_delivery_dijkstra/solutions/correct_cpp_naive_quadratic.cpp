#include <bits/stdc++.h>
using namespace std;

#define ll long long
const ll INF = 4e18;

int main() {
    ios_base::sync_with_stdio(0);
    cin.tie(0);
    int n, m;
    cin >> n >> m;
    vector<vector<pair<int, ll>>> g(n + 1);
    for (int i = 0; i < m; i++) {
        int a, b;
        ll c;
        cin >> a >> b >> c;
        g[a].push_back({b, c});
        g[b].push_back({a, c});
    }
    vector<ll> d(n + 1, INF);
    vector<bool> used(n + 1, false);
    d[1] = 0;
    // classic O(n^2) Dijkstra: pick the closest unused vertex each round
    for (int it = 0; it < n; it++) {
        int v = -1;
        for (int j = 1; j <= n; j++)
            if (!used[j] && (v == -1 || d[j] < d[v])) v = j;
        if (d[v] == INF) break;
        used[v] = true;
        for (auto &e : g[v])
            if (d[v] + e.second < d[e.first]) d[e.first] = d[v] + e.second;
    }
    for (int i = 1; i <= n; i++) cout << (d[i] == INF ? -1 : d[i]) << " ";
    cout << "\n";
}
