#include <bits/stdc++.h>
using namespace std;

int a[200005], pre[200005];

int main() {
    int n, q;
    scanf("%d%d", &n, &q);
    for (int i = 1; i <= n; i++) {
        scanf("%d", &a[i]);
        pre[i] = pre[i - 1] + a[i];
    }
    while (q--) {
        int l, r;
        scanf("%d%d", &l, &r);
        printf("%lld\n", (long long)(pre[r] - pre[l - 1]));
    }
    return 0;
}
