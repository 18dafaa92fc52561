#include <cstdio>
#include <vector>
using namespace std;

int n, q;
vector<long long> bit;

void add(int i, long long d) {
    for (; i <= n; i += i & -i) bit[i] += d;
}

long long pref(int i) {
    long long s = 0;
    for (; i > 0; i -= i & -i) s += bit[i];
    return s;
}

int main() {
    scanf("%d %d", &n, &q);
    bit.assign(n + 1, 0);
    vector<long long> a(n + 1);
    for (int i = 1; i <= n; i++) {
        scanf("%lld", &a[i]);
        add(i, a[i]);
    }
    while (q--) {
        int t, x;
        long long y;
        scanf("%d %d %lld", &t, &x, &y);
        if (t == 1) {
            add(x, y - a[x]);
            a[x] = y;
        } else {
            printf("%lld\n", pref((int)y) - pref(x - 1));
        }
    }
    return 0;
}
