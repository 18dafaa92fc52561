#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n, k;
    cin >> n >> k;
    vector<int> a(n);
    for (auto &x : a) cin >> x;
    deque<int> dq;  // stores values, not indices
    for (int i = 0; i < n; i++) {
        while (!dq.empty() && dq.back() <= a[i]) dq.pop_back();
        dq.push_back(a[i]);
        if (i >= k && dq.front() == a[i - k]) dq.pop_front();
        if (i >= k - 1) cout << dq.front() << ' ';
    }
    cout << '\n';
}
