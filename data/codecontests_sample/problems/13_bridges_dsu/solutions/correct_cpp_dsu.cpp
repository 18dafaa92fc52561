#include <bits/stdc++.h>
using namespace std;

int par[200005], sz[200005];

int find(int x) {
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

void unite(int a, int b) {
    a = find(a), b = find(b);
    if (a == b) return;
    if (sz[a] < sz[b]) swap(a, b);
    par[b] = a;
    sz[a] += sz[b];
}

int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    for (int i = 1; i <= n; i++) par[i] = i, sz[i] = 1;
    string out;
    out.reserve(q * 4);
    char op[3];
    for (int i = 0; i < q; i++) {
        int u, v;
        scanf("%s %d %d", op, &u, &v);
        if (op[0] == '+') unite(u, v);
        else out += (find(u) == find(v) ? "YES\n" : "NO\n");
    }
    fputs(out.c_str(), stdout);
}
