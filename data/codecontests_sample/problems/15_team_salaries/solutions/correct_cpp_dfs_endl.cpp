#include <iostream>
#include <vector>
using namespace std;

vector<vector<int>> adj;
vector<long long> a, sub;

void dfs(int v, int p) {
    sub[v] = a[v];
    for (int u : adj[v]) {
        if (u == p) continue;
        dfs(u, v);
        sub[v] += sub[u];
    }
}

int main() {
    int n;
    cin >> n;
    a.resize(n + 1);
    sub.resize(n + 1);
    adj.resize(n + 1);
    for (int i = 1; i <= n; i++) cin >> a[i];
    for (int i = 1; i < n; i++) {
        int u, v;
        cin >> u >> v;
        adj[u].push_back(v);
        adj[v].push_back(u);
    }
    dfs(1, 0);
    for (int i = 1; i <= n; i++) cout << sub[i] << endl;
    return 0;
}
