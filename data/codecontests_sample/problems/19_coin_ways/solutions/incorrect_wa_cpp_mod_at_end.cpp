#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, x;
    scanf("%d %d", &n, &x);
    vector<long long> dp(x + 1, 0);
    dp[0] = 1;
    for (int i = 0; i < n; i++) {
        int c;
        scanf("%d", &c);
        for (int s = c; s <= x; s++) dp[s] += dp[s - c];
    }
    printf("%lld\n", dp[x] % 1000000007);
}
