#include <bits/stdc++.h>
using namespace std;
typedef long long ll;
const ll MOD = 1e9 + 7;

pair<ll, ll> fib(ll n) {
    if (n == 0) return {0, 1};
    auto [a, b] = fib(n >> 1);
    ll c = a * (2 * b - a) % MOD;  // may become negative
    ll d = (a * a + b * b) % MOD;
    if (n & 1) return {d, (c + d) % MOD};
    return {c, d};
}

int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        ll n;
        scanf("%lld", &n);
        printf("%lld\n", fib(n).first);
    }
}
