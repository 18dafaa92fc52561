#include <bits/stdc++.h>
using namespace std;
const long long MOD = 1e9 + 7;

long long inv(long long a) {
    long long r = 1, e = MOD - 2;
    a %= MOD;
    while (e) {
        if (e & 1) r = r * a % MOD;
        a = a * a % MOD;
        e >>= 1;
    }
    return r;
}

int main() {
    int q;
    scanf("%d", &q);
    while (q--) {
        long long n, r;
        scanf("%lld %lld", &n, &r);
        if (r > n) { puts("0"); continue; }
        long long c = 1;
        for (long long i = 1; i <= r; i++)  // C(n, i) = C(n, i - 1) * (n - i + 1) / i
            c = c * ((n - i + 1) % MOD) % MOD * inv(i) % MOD;
        printf("%lld\n", c);
    }
}
