#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<long long> a(n);
    for (int i = 0; i < n; i++) cin >> a[i];
    vector<int> nxt(n, n);  // n means "none"
    for (int i = n - 2; i >= 0; i--) {
        int j = i + 1;
        while (j < n && a[j] <= a[i]) j = nxt[j];
        nxt[i] = j;
    }
    for (int i = 0; i < n; i++) {
        if (nxt[i] == n) cout << -1;
        else cout << nxt[i] + 1;
        cout << " ";
    }
    cout << endl;
}
