#include <bits/stdc++.h>
using namespace std;

static char buf[1 << 20];

int main() {
    int n, m;
    if (scanf("%d %d", &n, &m) != 2) return 0;
    // pad the grid with a border of walls so no bounds checks are needed
    int W = m + 2, H = n + 2;
    vector<char> g(W * H, '#');
    int s = -1, t = -1;
    for (int i = 0; i < n; i++) {
        scanf("%s", buf);
        for (int j = 0; j < m; j++) {
            int id = (i + 1) * W + (j + 1);
            g[id] = buf[j];
            if (buf[j] == 'S') s = id;
            if (buf[j] == 'T') t = id;
        }
    }
    vector<int> dist(W * H, -1), q(W * H);
    int head = 0, tail = 0;
    dist[s] = 0;
    q[tail++] = s;
    const int d[4] = {1, -1, W, -W};
    while (head < tail) {
        int v = q[head++];
        if (v == t) break;
        for (int k = 0; k < 4; k++) {
            int u = v + d[k];
            if (g[u] != '#' && dist[u] < 0) {
                dist[u] = dist[v] + 1;
                q[tail++] = u;
            }
        }
    }
    printf("%d\n", dist[t]);
    return 0;
}
