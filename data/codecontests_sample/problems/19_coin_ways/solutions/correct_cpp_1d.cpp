#include <bits/stdc++.h>
using namespace std;
const int MOD = 1000000007;

int main() {
    int n, x;
    scanf("%d %d", &n, &x);
    vector<int> c(n);
    for (auto &v : c) scanf("%d", &v);
    vector<int> dp(x + 1, 0);
    dp[0] = 1;
    for (int coin : c)
        for (int s = coin; s <= x; s++) {
            dp[s] += dp[s - coin];
            if (dp[s] >= MOD) dp[s] -= MOD;
        }
    printf("%d\n", dp[x]);
}
