#include <cstdio>
#include <vector>

int main() {
    int n, t;
    if (std::scanf("%d %d", &n, &t) != 2) return 0;
    std::vector<long long> count(1000001, 0);
    long long pairs = 0;
    for (int i = 0; i < n; ++i) {
        int a;
        std::scanf("%d", &a);
        int need = t - a;
        if (need >= 0 && need <= 1000000) pairs += count[need];
        ++count[a];
    }
    std::printf("%lld\n", pairs);
}
