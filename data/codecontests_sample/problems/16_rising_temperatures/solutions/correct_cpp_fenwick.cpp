#include <bits/stdc++.h>
using namespace std;

int n;
vector<int> bit;

void upd(int i, int v) {
    for (; i <= n; i += i & -i) bit[i] = max(bit[i], v);
}
int qry(int i) {
    int r = 0;
    for (; i > 0; i -= i & -i) r = max(r, bit[i]);
    return r;
}

int main() {
    cin >> n;
    vector<int> a(n);
    for (int i = 0; i < n; i++) cin >> a[i];
    vector<int> vals(a);
    sort(vals.begin(), vals.end());
    vals.erase(unique(vals.begin(), vals.end()), vals.end());
    bit.assign(n + 1, 0);
    int best = 0;
    for (int i = 0; i < n; i++) {
        int r = lower_bound(vals.begin(), vals.end(), a[i]) - vals.begin() + 1;
        int cur = qry(r - 1) + 1;  // strictly smaller values only
        upd(r, cur);
        best = max(best, cur);
    }
    cout << best << endl;
}
