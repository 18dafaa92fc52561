#include <bits/stdc++.h>
using namespace std;
using ll = long long;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    vector<ll> a(n);
    for (auto &x : a) cin >> x;
    sort(a.begin(), a.end());
    // merged piles are created in non-decreasing order, so a plain queue stays sorted
    vector<ll> merged;
    merged.reserve(n);
    size_t i = 0, j = 0;
    auto take = [&]() -> ll {
        if (j >= merged.size() || (i < a.size() && a[i] <= merged[j])) return a[i++];
        return merged[j++];
    };
    ll total = 0;
    for (int step = 0; step < n - 1; step++) {
        ll x = take();
        ll y = take();
        total += x + y;
        merged.push_back(x + y);
    }
    cout << total << '\n';
}
