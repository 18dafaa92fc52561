#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long s;
    cin >> n >> s;
    vector<long long> a(n);
    for (int i = 0; i < n; i++) cin >> a[i];
    long long ans = 0;
    for (int l = 0; l < n; l++) {
        long long cur = 0;
        for (int r = l; r < n; r++) {
            cur += a[r];
            if (cur > s) break;
            ans++;
        }
    }
    cout << ans << endl;
    return 0;
}
