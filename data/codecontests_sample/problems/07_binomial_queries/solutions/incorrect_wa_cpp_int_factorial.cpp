#include <bits/stdc++.h>
using namespace std;
const int MOD = 1000000007;
const int N = 200005;
int fact[N], ifact[N];

int pw(long long a, long long b) {
    long long r = 1;
    a %= MOD;
    while (b) {
        if (b & 1) r = r * a % MOD;
        a = a * a % MOD;
        b >>= 1;
    }
    return r;
}

int main() {
    fact[0] = 1;
    for (int i = 1; i < N; i++) fact[i] = fact[i - 1] * i % MOD;  // overflows int
    ifact[N - 1] = pw(fact[N - 1], MOD - 2);
    for (int i = N - 1; i > 0; i--) ifact[i - 1] = 1LL * ifact[i] * i % MOD;
    int q;
    scanf("%d", &q);
    while (q--) {
        int n, r;
        scanf("%d %d", &n, &r);
        if (r > n) { puts("0"); continue; }
        printf("%lld\n", 1LL * fact[n] * ifact[r] % MOD * ifact[n - r] % MOD);
    }
}
