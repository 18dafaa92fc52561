#include <bits/stdc++.h>
using namespace std;
typedef unsigned long long ull;
const ull MOD = 1000000007ULL;

// returns (F(n), F(n+1)) modulo MOD
pair<ull, ull> fib(ull n) {
    ull a = 0, b = 1;  // F(0), F(1)
    for (int bit = 63; bit >= 0; bit--) {
        ull c = a * ((2 * b + MOD - a) % MOD) % MOD;  // F(2k)
        ull d = (a * a + b * b) % MOD;                 // F(2k+1)
        if ((n >> bit) & 1) {
            a = d;
            b = (c + d) % MOD;
        } else {
            a = c;
            b = d;
        }
    }
    return {a, b};
}

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int t;
    cin >> t;
    while (t--) {
        ull n;
        cin >> n;
        cout << fib(n).first << '\n';
    }
    return 0;
}
