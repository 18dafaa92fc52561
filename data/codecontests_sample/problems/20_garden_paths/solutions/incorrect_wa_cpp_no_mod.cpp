#include <bits/stdc++.h>
using namespace std;
long long dp[1005][1005];
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n, m;
    cin >> n >> m;
    vector<string> g(n);
    for (auto &s : g) cin >> s;
    dp[0][0] = g[0][0] == '.';
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (g[i][j] == '#' || (i == 0 && j == 0)) continue;
            dp[i][j] = (i ? dp[i - 1][j] : 0) + (j ? dp[i][j - 1] : 0);
        }
    cout << dp[n - 1][m - 1] % 1000000007 << '\n';
}
