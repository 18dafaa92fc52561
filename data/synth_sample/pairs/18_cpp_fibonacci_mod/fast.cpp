#include <cstdio>

typedef unsigned long long u64;
static const u64 MOD = 1000000007ULL;

// Fast doubling: F(2k) = F(k) (2F(k+1) - F(k)), F(2k+1) = F(k)^2 + F(k+1)^2.
static void fib(u64 n, u64& f, u64& g) {
    if (n == 0) { f = 0; g = 1; return; }
    u64 a, b;
    fib(n / 2, a, b);
    u64 c = a * ((2 * b + MOD - a) % MOD) % MOD;
    u64 d = (a * a + b * b) % MOD;
    if (n % 2 == 0) { f = c; g = d; }
    else { f = d; g = (c + d) % MOD; }
}

int main() {
    u64 n, f, g;
    std::scanf("%llu", &n);
    fib(n, f, g);
    std::printf("%llu\n", f);
}
