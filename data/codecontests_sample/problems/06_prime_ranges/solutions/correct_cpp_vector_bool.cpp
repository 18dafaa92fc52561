#include <bits/stdc++.h>
using namespace std;

int main() {
    int q;
    cin >> q;
    vector<int> L(q), R(q);
    for (int i = 0; i < q; i++) cin >> L[i] >> R[i];
    int N = *max_element(R.begin(), R.end());
    vector<bool> prime(N + 1, true);
    prime[0] = false;
    if (N >= 1) prime[1] = false;
    for (int p = 2; p * p <= N; p++) {
        if (!prime[p]) continue;
        for (int m = p * p; m <= N; m += p) prime[m] = false;
    }
    vector<int> pc(N + 1, 0);
    for (int i = 1; i <= N; i++) pc[i] = pc[i - 1] + prime[i];
    for (int i = 0; i < q; i++) cout << pc[R[i]] - pc[L[i] - 1] << "\n";
}
