#include <bits/stdc++.h>
using namespace std;
typedef long long ll;

int main() {
    ios_base::sync_with_stdio(0);
    cin.tie(0);
    int n;
    cin >> n;
    vector<string> v(n);
    for (auto &s : v) {
        cin >> s;
        sort(s.begin(), s.end());
    }
    sort(v.begin(), v.end());
    ll ans = 0;
    for (int i = 0, j; i < n; i = j) {
        j = i;
        while (j < n && v[j] == v[i]) j++;
        ll c = j - i;
        ans += c * (c - 1) / 2;
    }
    cout << ans << "\n";
}
