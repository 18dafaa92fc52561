#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    unordered_map<string, long long> cnt;
    cnt.reserve(n * 2);
    long long ans = 0;
    string w;
    for (int i = 0; i < n; i++) {
        cin >> w;
        sort(w.begin(), w.end());
        ans += cnt[w]++;
    }
    cout << ans << '\n';
}
