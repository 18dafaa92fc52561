#include <bits/stdc++.h>
using namespace std;
const int MOD = 1000000007;
char row[1005];

int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<int> dp(m, 0);
    for (int i = 0; i < n; i++) {
        scanf("%s", row);
        for (int j = 0; j < m; j++) {
            if (row[j] == '#') {
                dp[j] = 0;
                continue;
            }
            if (i == 0 && j == 0) dp[j] = 1;
            else if (j > 0) {
                dp[j] += dp[j - 1];
                if (dp[j] >= MOD) dp[j] -= MOD;
            }
        }
    }
    printf("%d\n", dp[m - 1]);
}
