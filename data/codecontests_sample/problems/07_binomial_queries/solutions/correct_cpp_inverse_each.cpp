#include <bits/stdc++.h>
using namespace std;
#define int long long
const int mod = 1e9 + 7;

int binpow(int a, int b) {
    int res = 1;
    while (b) {
        if (b & 1) res = res * a % mod;
        a = a * a % mod;
        b >>= 1;
    }
    return res;
}

signed main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int q;
    cin >> q;
    vector<pair<int,int>> qs(q);
    int mx = 0;
    for (auto &[n, r] : qs) {
        cin >> n >> r;
        mx = max(mx, n);
    }
    vector<int> f(mx + 1), inv(mx + 1);
    f[0] = 1;
    for (int i = 1; i <= mx; i++) f[i] = f[i - 1] * i % mod;
    for (int i = 0; i <= mx; i++) inv[i] = binpow(f[i], mod - 2);
    for (auto &[n, r] : qs) {
        if (r > n) cout << 0 << '\n';
        else cout << f[n] * inv[r] % mod * inv[n - r] % mod << '\n';
    }
}
