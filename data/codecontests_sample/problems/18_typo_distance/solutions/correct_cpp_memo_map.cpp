#include <bits/stdc++.h>
using namespace std;

string a, b;
map<pair<int, int>, int> memo;

// distance between the suffixes a[i..] and b[j..]
int solve(int i, int j) {
    if (i == (int)a.size()) return b.size() - j;
    if (j == (int)b.size()) return a.size() - i;
    auto key = make_pair(i, j);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    int res;
    if (a[i] == b[j]) res = solve(i + 1, j + 1);
    else res = 1 + min({solve(i + 1, j + 1), solve(i + 1, j), solve(i, j + 1)});
    memo[key] = res;
    return res;
}

int main() {
    cin >> a >> b;
    cout << solve(0, 0) << "\n";
    return 0;
}
