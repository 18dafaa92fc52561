#include <bits/stdc++.h>
using namespace std;

vector<int> zf(const string &s) {
    int n = s.size();
    vector<int> z(n, 0);
    for (int i = 1, l = 0, r = 0; i < n; i++) {
        if (i < r) z[i] = min(r - i, z[i - l]);
        while (i + z[i] < n && s[z[i]] == s[i + z[i]]) z[i]++;
        if (i + z[i] > r) l = i, r = i + z[i];
    }
    return z;
}

int main() {
    string t, p;
    cin >> t >> p;
    string s = p + "#" + t;
    vector<int> z = zf(s);
    int m = p.size(), res = 0;
    for (int i = m + 1; i < (int)s.size(); i++)
        if (z[i] >= m) res++;
    cout << res << endl;
}
