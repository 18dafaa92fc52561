#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m;
    cin >> n >> m;
    vector<vector<char>> a(n, vector<char>(m));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) cin >> a[i][j];
    vector<vector<long long>> f(n, vector<long long>(m, 0));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (a[i][j] == '#') continue;
            if (i == 0 && j == 0) { f[i][j] = 1; continue; }
            if (i > 0) f[i][j] += f[i - 1][j];
            if (j > 0) f[i][j] += f[i][j - 1];
            f[i][j] %= 1000000007;
        }
    cout << f[n - 1][m - 1] << endl;
}
