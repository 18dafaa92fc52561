#include <bits/stdc++.h>
using namespace std;
typedef long long ll;

int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<ll> t(n + 1), finish(n + 1, 0);
    for (int i = 1; i <= n; i++) scanf("%lld", &t[i]);
    vector<vector<int>> g(n + 1);
    vector<int> indeg(n + 1, 0);
    for (int i = 0; i < m; i++) {
        int a, b;
        scanf("%d %d", &a, &b);
        g[a].push_back(b);
        indeg[b]++;
    }
    vector<int> order;
    order.reserve(n);
    for (int i = 1; i <= n; i++)
        if (indeg[i] == 0) order.push_back(i);
    // start[v] is kept in finish[v] until v is popped
    for (size_t k = 0; k < order.size(); k++) {
        int v = order[k];
        finish[v] += t[v];
        for (int u : g[v]) {
            finish[u] = max(finish[u], finish[v]);
            if (--indeg[u] == 0) order.push_back(u);
        }
    }
    if ((int)order.size() < n) {
        puts("-1");
        return 0;
    }
    printf("%lld\n", *max_element(finish.begin(), finish.end()));
}
