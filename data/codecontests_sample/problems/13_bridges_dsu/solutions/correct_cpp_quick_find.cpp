#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n, q;
    cin >> n >> q;
    // comp[v] = label of the island group containing v
    vector<int> comp(n + 1);
    for (int i = 1; i <= n; i++) comp[i] = i;
    while (q--) {
        char c;
        int u, v;
        cin >> c >> u >> v;
        if (c == '+') {
            int a = comp[u], b = comp[v];
            if (a == b) continue;
            for (int i = 1; i <= n; i++)
                if (comp[i] == b) comp[i] = a;
        } else {
            cout << (comp[u] == comp[v] ? "YES" : "NO") << '\n';
        }
    }
    return 0;
}
