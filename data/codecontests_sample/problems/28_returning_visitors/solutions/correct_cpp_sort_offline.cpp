#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<pair<int, int>> p(n);
    for (int i = 0; i < n; i++) {
        scanf("%d", &p[i].first);
        p[i].second = i;
    }
    sort(p.begin(), p.end());
    vector<int> ans(n);
    for (int i = 0; i < n; i++) {
        // p is sorted by (value, index): the number of earlier equal entries is the answer
        ans[p[i].second] = (i > 0 && p[i - 1].first == p[i].first) ? ans[p[i - 1].second] + 1 : 0;
    }
    for (int i = 0; i < n; i++) printf("%d\n", ans[i]);
}
