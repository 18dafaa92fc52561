#include <bits/stdc++.h>
using namespace std;

string s;
int n;

int expand(int l, int r) {
    while (l >= 0 && r < n && s[l] == s[r]) {
        l--;
        r++;
    }
    return r - l - 1;
}

int main() {
    cin >> s;
    n = s.size();
    int ans = 1;
    for (int i = 0; i < n; i++) {
        ans = max(ans, expand(i, i));
        ans = max(ans, expand(i, i + 1));
    }
    cout << ans << endl;
    return 0;
}
