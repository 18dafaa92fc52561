#include <bits/stdc++.h>
using namespace std;

long long dp[100005];

int main() {
    int n, W;
    scanf("%d %d", &n, &W);
    for (int i = 0; i < n; i++) {
        int w;
        long long v;
        scanf("%d %lld", &w, &v);
        for (int c = W; c >= w; c--)
            dp[c] = max(dp[c], dp[c - w] + v);
    }
    printf("%lld\n", dp[W]);
    return 0;
}
