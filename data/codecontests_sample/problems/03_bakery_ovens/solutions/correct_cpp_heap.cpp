#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(0);
    int n, m;
    cin >> n >> m;
    priority_queue<pair<long long, long long>, vector<pair<long long, long long>>, greater<>> pq;
    for (int i = 0; i < n; i++) {
        long long t;
        cin >> t;
        pq.push({t, t});  // (time the next loaf of this oven is ready, period)
    }
    long long last = 0;
    for (int k = 0; k < m; k++) {
        auto [when, per] = pq.top();
        pq.pop();
        last = when;
        pq.push({when + per, per});
    }
    cout << last << "\n";
    return 0;
}
