#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    vector<int> b(n), fin(n);
    for (int i = 0; i < n; i++) scanf("%d", &b[i]);
    queue<int> Q;
    for (int i = 0; i < n; i++) Q.push(i);
    int t = 0;
    while (!Q.empty()) {
        int i = Q.front(); Q.pop();
        int d = min(b[i], q);
        t += d;
        b[i] -= d;
        if (b[i] > 0) Q.push(i);
        else fin[i] = t;
    }
    for (int i = 0; i < n; i++) printf("%d ", fin[i]);
    printf("\n");
}
