#include <bits/stdc++.h>
using namespace std;
using ll = long long;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    ll s;
    cin >> n >> s;
    vector<ll> p(n + 1, 0);
    for (int i = 1; i <= n; i++) {
        ll x;
        cin >> x;
        p[i] = p[i - 1] + x;
    }
    ll ans = 0;
    // subarray (l, r] is good iff p[l] >= p[r] - s; prefix sums are increasing
    for (int r = 1; r <= n; r++) {
        int l = lower_bound(p.begin(), p.begin() + r, p[r] - s) - p.begin();
        ans += r - l;
    }
    cout << ans << '\n';
}
