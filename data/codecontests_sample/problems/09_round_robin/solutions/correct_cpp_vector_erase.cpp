#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long Q;
    cin >> n >> Q;
    vector<long long> b(n), ans(n);
    for (auto &x : b) cin >> x;
    vector<int> line;
    for (int i = 0; i < n; i++) line.push_back(i);
    long long now = 0;
    while (!line.empty()) {
        int cur = line[0];
        line.erase(line.begin());
        long long run = min(Q, b[cur]);
        now += run;
        b[cur] -= run;
        if (b[cur] == 0) ans[cur] = now;
        else line.push_back(cur);
    }
    for (int i = 0; i < n; i++) cout << ans[i] << " ";
    cout << endl;
}
