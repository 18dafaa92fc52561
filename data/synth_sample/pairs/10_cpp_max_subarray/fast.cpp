#include <algorithm>
#include <cstdio>

int main() {
    int n;
    std::scanf("%d", &n);
    long long best = -(1LL << 62), cur = 0;
    for (int i = 0; i < n; ++i) {
        long long x;
        std::scanf("%lld", &x);
        cur = std::max(x, cur + x);  // Kadane
        best = std::max(best, cur);
    }
    std::printf("%lld\n", best);
}
