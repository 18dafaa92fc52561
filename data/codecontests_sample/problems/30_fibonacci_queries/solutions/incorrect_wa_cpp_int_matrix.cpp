#include <bits/stdc++.h>
using namespace std;
const int MOD = 1000000007;

void mul(int a[2][2], int b[2][2]) {
    int c[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            c[i][j] = (1LL * a[i][0] * b[0][j] + 1LL * a[i][1] * b[1][j]) % MOD;
    memcpy(a, c, sizeof c);
}

int main() {
    int t;
    cin >> t;
    while (t--) {
        int n;  // n does not fit into int!
        cin >> n;
        int r[2][2] = {{1, 0}, {0, 1}}, m[2][2] = {{1, 1}, {1, 0}};
        while (n > 0) {
            if (n & 1) mul(r, m);
            mul(m, m);
            n >>= 1;
        }
        cout << r[0][1] << "\n";
    }
}
