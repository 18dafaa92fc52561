#include <bits/stdc++.h>
using namespace std;
typedef unsigned long long ull;
const ull P = 1000000007ULL;

ull mpow(ull a, ull e) {
    ull r = 1;
    for (; e; e >>= 1, a = a * a % P)
        if (e & 1) r = r * a % P;
    return r;
}

int main() {
    static ull f[200001];
    f[0] = 1;
    for (int i = 1; i <= 200000; i++) f[i] = f[i - 1] * i % P;
    int q;
    cin >> q;
    while (q--) {
        int n, r;
        cin >> n >> r;
        if (r > n) {
            cout << 0 << "\n";
            continue;
        }
        ull den = f[r] * f[n - r] % P;
        cout << f[n] * mpow(den, P - 2) % P << "\n";
    }
}
