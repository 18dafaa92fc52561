#include <cstdio>
#include <vector>

// Count primes below n with a byte sieve that skips even numbers.
int main() {
    int n;
    if (std::scanf("%d", &n) != 1) return 1;
    std::vector<char> composite(n / 2 + 1, 0);
    int count = n > 2 ? 1 : 0;
    for (long long i = 3; i < n; i += 2) {
        if (composite[i / 2]) continue;
        ++count;
        for (long long j = i * i; j < n; j += 2 * i) composite[j / 2] = 1;
    }
    std::printf("%d\n", count);
    return 0;
}
