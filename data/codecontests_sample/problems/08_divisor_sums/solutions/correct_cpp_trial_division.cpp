#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cin >> n;
    long long ans = 0;
    for (int i = 0; i < n; i++) {
        int x;
        cin >> x;
        long long s = 0;
        for (int d = 1; d * d <= x; d++) {
            if (x % d == 0) {
                s += d;
                if (d != x / d) s += x / d;
            }
        }
        ans += s;
    }
    cout << ans << endl;
}
