#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    string s;
    cin >> s;
    string res;
    res.reserve(2 * s.size());
    int n = s.size();
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && s[j] == s[i]) j++;
        res += s[i];
        res += to_string(j - i);
        i = j;
    }
    cout << res << '\n';
    return 0;
}
