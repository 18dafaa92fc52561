#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) std::scanf("%lld", &x);
    std::sort(a.begin(), a.end());
    long long best = a[1] - a[0];
    for (int i = 2; i < n; ++i) best = std::min(best, a[i] - a[i - 1]);
    std::printf("%lld\n", best);
}
