#include <bits/stdc++.h>
#define ll long long
#define all(v) (v).begin(), (v).end()
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n; ll k;
    cin >> n >> k;
    vector<ll> a(n);
    for (int i = 0; i < n; ++i) cin >> a[i];
    sort(all(a));
    ll res = 0;
    for (int i = 0; i < n; ++i) {
        // partners to the right of i with a[j] <= k - a[i]
        auto it = upper_bound(a.begin() + i + 1, a.end(), k - a[i]);
        res += it - (a.begin() + i + 1);
    }
    cout << res << '\n';
    return 0;
}
