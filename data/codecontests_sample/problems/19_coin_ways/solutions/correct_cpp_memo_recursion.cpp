#include <bits/stdc++.h>
using namespace std;
const long long MOD = 1e9 + 7;

int n, x;
vector<int> c;
vector<vector<long long>> memo;

// number of ways to pay s using coins c[i..n-1]
long long ways(int i, int s) {
    if (s == 0) return 1;
    if (i == n) return 0;
    long long &r = memo[i][s];
    if (r != -1) return r;
    r = ways(i + 1, s);
    if (s >= c[i]) r = (r + ways(i, s - c[i])) % MOD;
    return r;
}

int main() {
    cin >> n >> x;
    c.resize(n);
    for (int i = 0; i < n; i++) cin >> c[i];
    memo.assign(n, vector<long long>(x + 1, -1));
    cout << ways(0, x) << endl;
}
