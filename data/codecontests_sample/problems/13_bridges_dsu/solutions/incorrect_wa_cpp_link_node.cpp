#include <bits/stdc++.h>
using namespace std;
int p[200005];
int get(int v) { return p[v] == v ? v : p[v] = get(p[v]); }
int main() {
    ios::sync_with_stdio(0); cin.tie(0);
    int n, q; cin >> n >> q;
    for (int i = 1; i <= n; i++) p[i] = i;
    while (q--) {
        char c; int u, v; cin >> c >> u >> v;
        if (c == '+') p[u] = get(v);
        else cout << (get(u) == get(v) ? "YES\n" : "NO\n");
    }
}
