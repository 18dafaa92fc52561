#include <bits/stdc++.h>
using namespace std;
typedef long long ll;

int main() {
    int n;
    scanf("%d", &n);
    vector<ll> sum(n + 1);
    for (int i = 1; i <= n; i++) scanf("%lld", &sum[i]);
    vector<int> head(n + 1, -1), nxt(2 * n), to(2 * n);
    int cnt = 0;
    for (int i = 0; i < n - 1; i++) {
        int u, v;
        scanf("%d %d", &u, &v);
        to[cnt] = v, nxt[cnt] = head[u], head[u] = cnt++;
        to[cnt] = u, nxt[cnt] = head[v], head[v] = cnt++;
    }
    vector<int> order, par(n + 1, 0);
    order.reserve(n);
    order.push_back(1);
    for (int k = 0; k < (int)order.size(); k++) {
        int v = order[k];
        for (int e = head[v]; e != -1; e = nxt[e])
            if (to[e] != par[v]) {
                par[to[e]] = v;
                order.push_back(to[e]);
            }
    }
    for (int k = n - 1; k > 0; k--) sum[par[order[k]]] += sum[order[k]];
    for (int i = 1; i <= n; i++) printf("%lld%c", sum[i], i == n ? '\n' : ' ');
    return 0;
}
