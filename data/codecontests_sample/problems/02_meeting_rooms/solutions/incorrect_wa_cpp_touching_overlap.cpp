#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<pair<int,int>> ev;
    for (int i = 0; i < n; i++) {
        int l, r;
        scanf("%d %d", &l, &r);
        ev.push_back({l, -1});   // start
        ev.push_back({r, 1});    // end
    }
    sort(ev.begin(), ev.end());  // starts before ends at equal times
    int cur = 0, ans = 0;
    for (auto &e : ev) {
        cur -= e.second;
        ans = max(ans, cur);
    }
    printf("%d\n", ans);
}
