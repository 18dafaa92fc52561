#include <bits/stdc++.h>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
using namespace std;
using namespace __gnu_pbds;

typedef tree<int, null_type, less<int>, rb_tree_tag, tree_order_statistics_node_update> ordered_set;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    long long k;
    cin >> n >> k;
    ordered_set s;
    for (int i = 1; i <= n; i++) s.insert(i);
    long long pos = 0;
    for (int m = n; m >= 1; m--) {
        pos = (pos + k - 1) % m;
        auto it = s.find_by_order(pos);
        cout << *it << (m == 1 ? '\n' : ' ');
        s.erase(it);
    }
}
