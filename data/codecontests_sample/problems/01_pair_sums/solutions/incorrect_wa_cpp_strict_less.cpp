#include <bits/stdc++.h>
using namespace std;

int main() {
    ios_base::sync_with_stdio(0); cin.tie(0);
    int n; long long k;
    cin >> n >> k;
    vector<long long> a(n);
    for (int i = 0; i < n; i++) cin >> a[i];
    sort(a.begin(), a.end());
    long long ans = 0;
    int l = 0, r = n - 1;
    while (l < r) {
        if (a[l] + a[r] < k) { ans += r - l; l++; }
        else r--;
    }
    cout << ans << "\n";
}
