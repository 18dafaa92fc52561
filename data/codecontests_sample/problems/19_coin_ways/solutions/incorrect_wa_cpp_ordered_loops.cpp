#include <bits/stdc++.h>
using namespace std;
const int MOD = 1e9 + 7;
int main() {
    int n, x;
    cin >> n >> x;
    vector<int> c(n);
    for (int &v : c) cin >> v;
    vector<long long> dp(x + 1);
    dp[0] = 1;
    for (int s = 1; s <= x; s++)
        for (int v : c)
            if (v <= s) dp[s] = (dp[s] + dp[s - v]) % MOD;
    cout << dp[x] << endl;
}
