#include <bits/stdc++.h>
using namespace std;
int n, W;
int w[105];
long long v[105];

long long go(int i, int cap) {
    if (i == n) return 0;
    long long res = go(i + 1, cap);
    if (w[i] <= cap) res = max(res, go(i + 1, cap - w[i]) + v[i]);
    return res;
}

int main() {
    scanf("%d %d", &n, &W);
    for (int i = 0; i < n; i++) scanf("%d %lld", &w[i], &v[i]);
    printf("%lld\n", go(0, W));
}
