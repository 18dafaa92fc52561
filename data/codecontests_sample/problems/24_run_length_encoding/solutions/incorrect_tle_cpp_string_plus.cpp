#include <bits/stdc++.h>
using namespace std;

int main() {
    string s, res = "";
    cin >> s;
    int n = s.size();
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && s[j] == s[i]) j++;
        res = res + s[i] + to_string(j - i);
        i = j;
    }
    cout << res << endl;
}
