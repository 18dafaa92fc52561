#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<long long> t(n + 1);
    for (int i = 1; i <= n; i++) cin >> t[i];
    vector<vector<int>> out(n + 1);
    vector<int> deg(n + 1);
    for (int i = 0; i < m; i++) {
        int a, b;
        cin >> a >> b;
        out[a].push_back(b);
        deg[b]++;
    }
    vector<long long> best(n + 1, 0);
    vector<bool> done(n + 1, false);
    long long ans = 0;
    for (int step = 0; step < n; step++) {
        // find any task whose prerequisites are all done
        int v = -1;
        for (int i = 1; i <= n; i++) {
            if (!done[i] && deg[i] == 0) {
                v = i;
                break;
            }
        }
        if (v == -1) {
            cout << -1 << endl;
            return 0;
        }
        done[v] = true;
        long long end = best[v] + t[v];
        ans = max(ans, end);
        for (int u : out[v]) {
            deg[u]--;
            best[u] = max(best[u], end);
        }
    }
    cout << ans << endl;
    return 0;
}
