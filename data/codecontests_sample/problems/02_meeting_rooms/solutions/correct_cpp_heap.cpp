#include <bits/stdc++.h>
using namespace std;
typedef pair<int,int> pii;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(NULL);
    int n;
    cin >> n;
    vector<pii> v(n);
    for (auto &p : v) cin >> p.first >> p.second;
    sort(v.begin(), v.end());
    priority_queue<int, vector<int>, greater<int>> pq;  // end times of busy rooms
    for (auto &p : v) {
        if (!pq.empty() && pq.top() <= p.first) pq.pop();
        pq.push(p.second);
    }
    cout << pq.size() << "\n";
}
