#include <cstdio>
typedef long long ll;
const ll MOD = 1000000007LL;
const int N = 200000;
ll fact[N + 1], inv_fact[N + 1];

ll power(ll b, ll e) {
    ll r = 1;
    b %= MOD;
    while (e > 0) {
        if (e & 1) r = r * b % MOD;
        b = b * b % MOD;
        e >>= 1;
    }
    return r;
}

int main() {
    fact[0] = 1;
    for (int i = 1; i <= N; i++) fact[i] = fact[i - 1] * i % MOD;
    inv_fact[N] = power(fact[N], MOD - 2);
    for (int i = N; i > 0; i--) inv_fact[i - 1] = inv_fact[i] * i % MOD;
    int q;
    scanf("%d", &q);
    while (q--) {
        int n, r;
        scanf("%d %d", &n, &r);
        if (r < 0 || r > n) {
            puts("0");
            continue;
        }
        printf("%lld\n", fact[n] * inv_fact[r] % MOD * inv_fact[n - r] % MOD);
    }
    return 0;
}
