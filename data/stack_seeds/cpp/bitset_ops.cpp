#include <bitset>
#include <cstdio>

// Subset-sum reachability with a bitset: bit s is set iff some subset sums to s.
int main() {
    const int MAXS = 100000;
    std::bitset<MAXS + 1> reach;
    reach[0] = 1;
    int n;
    std::scanf("%d", &n);
    for (int i = 0; i < n; ++i) {
        int w;
        std::scanf("%d", &w);
        reach |= reach << w;
    }
    int q;
    std::scanf("%d", &q);
    while (q--) {
        int s;
        std::scanf("%d", &s);
        std::puts(s <= MAXS && reach[s] ? "YES" : "NO");
    }
}
