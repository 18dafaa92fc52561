#include <bits/stdc++.h>
using namespace std;
typedef long long ll;

int main() {
    ios_base::sync_with_stdio(false);
    cin.tie(NULL);
    int n;
    cin >> n;
    vector<int> a(n);
    int mx = 1;
    for (int i = 0; i < n; i++) {
        cin >> a[i];
        mx = max(mx, a[i]);
    }
    vector<ll> sigma(mx + 1, 0);
    for (int d = 1; d <= mx; d++)
        for (int m = d; m <= mx; m += d) sigma[m] += d;
    ll tot = 0;
    for (int x : a) tot += sigma[x];
    cout << tot << "\n";
    return 0;
}
