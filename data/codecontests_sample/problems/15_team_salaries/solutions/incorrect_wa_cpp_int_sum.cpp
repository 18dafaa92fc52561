#include <bits/stdc++.h>
using namespace std;
const int N = 100005;
int n, a[N], s[N];
vector<int> g[N];
void dfs(int v, int p) {
    s[v] = a[v];
    for (int u : g[v])
        if (u != p) dfs(u, v), s[v] += s[u];
}
int main() {
    scanf("%d", &n);
    for (int i = 1; i <= n; i++) scanf("%d", &a[i]);
    for (int i = 1; i < n; i++) {
        int u, v;
        scanf("%d%d", &u, &v);
        g[u].push_back(v), g[v].push_back(u);
    }
    dfs(1, 0);
    for (int i = 1; i <= n; i++) printf("%d ", s[i]);
    puts("");
}
