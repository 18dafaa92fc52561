#include <bits/stdc++.h>
using namespace std;

int main() {
    long long n, m;
    cin >> n >> m;
    vector<long long> t(n);
    for (int i = 0; i < n; i++) cin >> t[i];
    long long l = 1, r = (long long)1e18, ans = r;
    while (l <= r) {
        long long mid = l + (r - l) / 2;
        long long cnt = 0;
        for (int i = 0; i < n && cnt < m; i++) cnt += mid / t[i];
        if (cnt >= m) {
            ans = mid;
            r = mid - 1;
        } else {
            l = mid + 1;
        }
    }
    cout << ans << endl;
}
