#include <bits/stdc++.h>
using namespace std;

int main() {
    string s;
    cin >> s;
    int n = s.size();
    vector<vector<bool>> dp(n, vector<bool>(n, false));
    int best = 1;
    for (int i = n - 1; i >= 0; i--) {
        dp[i][i] = true;
        for (int j = i + 1; j < n; j++) {
            if (s[i] == s[j] && (j - i < 3 || dp[i + 1][j - 1])) {
                dp[i][j] = true;
                best = max(best, j - i + 1);
            }
        }
    }
    printf("%d\n", best);
}
