#include <bits/stdc++.h>
using namespace std;
const long long MOD = 1e9 + 7;
int n, m;
vector<string> g;
vector<vector<long long>> memo;

// number of ways to reach (i, j) from the top-left corner
long long ways(int i, int j) {
    if (i < 0 || j < 0 || g[i][j] == '#') return 0;
    if (i == 0 && j == 0) return 1;
    long long &r = memo[i][j];
    if (r != -1) return r;
    return r = (ways(i - 1, j) + ways(i, j - 1)) % MOD;
}

int main() {
    cin >> n >> m;
    g.resize(n);
    for (auto &s : g) cin >> s;
    memo.assign(n, vector<long long>(m, -1));
    // fill row by row so that the recursion never gets deep
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) ways(i, j);
    cout << ways(n - 1, m - 1) << endl;
}
