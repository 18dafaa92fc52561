#include <bits/stdc++.h>
using namespace std;

bool isPrime(int x) {
    if (x < 2) return false;
    if (x % 2 == 0) return x == 2;
    for (int d = 3; d * d <= x; d += 2)
        if (x % d == 0) return false;
    return true;
}

int main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int q;
    cin >> q;
    vector<pair<int, int>> qs(q);
    int mx = 1;
    for (auto &p : qs) {
        cin >> p.first >> p.second;
        mx = max(mx, p.second);
    }
    vector<int> pref(mx + 1, 0);
    for (int i = 1; i <= mx; i++) pref[i] = pref[i - 1] + isPrime(i);
    for (auto &p : qs) cout << pref[p.second] - pref[p.first - 1] << '\n';
    return 0;
}
