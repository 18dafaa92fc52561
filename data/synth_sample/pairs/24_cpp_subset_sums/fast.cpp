#include <bitset>
#include <cstdio>

int main() {
    const int MAXS = 200000;
    static std::bitset<MAXS + 1> reach;
    int n, s;
    std::scanf("%d %d", &n, &s);
    reach[0] = 1;
    for (int i = 0; i < n; ++i) {
        int w;
        std::scanf("%d", &w);
        reach |= reach << w;
    }
    int count = 0;
    for (int t = 1; t <= s; ++t) count += reach[t];
    std::printf("%d\n", count);
}
