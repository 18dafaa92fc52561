#include <bits/stdc++.h>
using namespace std;
using ll = long long;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n, q;
    cin >> n >> q;
    int sz = 1;
    while (sz < n) sz <<= 1;
    vector<ll> t(2 * sz, 0);
    for (int i = 0; i < n; i++) cin >> t[sz + i];
    for (int i = sz - 1; i >= 1; i--) t[i] = t[2 * i] + t[2 * i + 1];
    string out;
    while (q--) {
        int type;
        ll x, y;
        cin >> type >> x >> y;
        if (type == 1) {
            int p = sz + x - 1;
            t[p] = y;
            for (p >>= 1; p >= 1; p >>= 1) t[p] = t[2 * p] + t[2 * p + 1];
        } else {
            ll res = 0;
            for (ll l = sz + x - 1, r = sz + y; l < r; l >>= 1, r >>= 1) {
                if (l & 1) res += t[l++];
                if (r & 1) res += t[--r];
            }
            out += to_string(res);
            out += '\n';
        }
    }
    cout << out;
}
