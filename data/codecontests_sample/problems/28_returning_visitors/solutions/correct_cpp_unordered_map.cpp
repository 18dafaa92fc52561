#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    unordered_map<int, int> seen;
    seen.reserve(2 * n + 1);
    string out;
    out.reserve(8 * n);
    for (int i = 0; i < n; i++) {
        int x;
        cin >> x;
        int &c = seen[x];
        out += to_string(c);
        out += '\n';
        c++;
    }
    cout << out;
    return 0;
}
