#include <bits/stdc++.h>
using namespace std;

int n, m, t[200005];

bool ok(long long T) {
    long long s = 0;
    for (int i = 0; i < n; i++) {
        s += T / t[i];
        if (s >= m) return true;
    }
    return false;
}

int main() {
    scanf("%d %d", &n, &m);
    for (int i = 0; i < n; i++) scanf("%d", &t[i]);
    long long lo = 0, hi = *min_element(t, t + n) * m;
    while (lo + 1 < hi) {
        long long mid = (lo + hi) / 2;
        if (ok(mid)) hi = mid;
        else lo = mid;
    }
    printf("%lld\n", hi);
}
