#include <bits/stdc++.h>
using namespace std;

int n;
int bit[200005], a[200005];

void upd(int i, int d) {
    for (; i <= n; i += i & -i) bit[i] += d;
}
int get(int i) {
    int s = 0;
    for (; i; i -= i & -i) s += bit[i];
    return s;
}

int main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int q;
    cin >> n >> q;
    for (int i = 1; i <= n; i++) {
        cin >> a[i];
        upd(i, a[i]);
    }
    while (q--) {
        int t, x, y;
        cin >> t >> x >> y;
        if (t == 1) {
            upd(x, y - a[x]);
            a[x] = y;
        } else {
            cout << get(y) - get(x - 1) << "\n";
        }
    }
}
