#include <cstdio>
#include <vector>
#include <algorithm>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    int M = *max_element(a.begin(), a.end());
    // linear sieve: smallest prime factor of every number up to M
    vector<int> spf(M + 1, 0), primes;
    for (int i = 2; i <= M; i++) {
        if (!spf[i]) { spf[i] = i; primes.push_back(i); }
        for (int p : primes) {
            if (p > spf[i] || (long long)p * i > M) break;
            spf[p * i] = p;
        }
    }
    long long total = 0;
    for (int x : a) {
        long long s = 1;
        while (x > 1) {
            int p = spf[x];
            long long term = 1, pk = 1;
            while (x % p == 0) {
                x /= p;
                pk *= p;
                term += pk;
            }
            s *= term;
        }
        total += s;
    }
    printf("%lld\n", total);
    return 0;
}
