#include <bits/stdc++.h>
using namespace std;
#define MOD 1000000007LL
long long dp[105][100005];
int main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int n, x;
    cin >> n >> x;
    vector<int> c(n + 1);
    for (int i = 1; i <= n; i++) cin >> c[i];
    dp[0][0] = 1;
    for (int i = 1; i <= n; i++) {
        for (int s = 0; s <= x; s++) {
            dp[i][s] = dp[i - 1][s];
            if (s >= c[i]) dp[i][s] = (dp[i][s] + dp[i][s - c[i]]) % MOD;
        }
    }
    cout << dp[n][x] << "\n";
}
