#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    map<string, int> cnt;
    int ans = 0;
    for (int i = 0; i < n; i++) {
        string w;
        cin >> w;
        sort(w.begin(), w.end());
        ans += cnt[w];
        cnt[w]++;
    }
    cout << ans << '\n';
}
