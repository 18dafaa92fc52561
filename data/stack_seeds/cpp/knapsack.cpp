#include <algorithm>
#include <iostream>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    int n, cap;
    std::cin >> n >> cap;
    std::vector<long long> best(cap + 1, 0);
    for (int i = 0; i < n; ++i) {
        int w; long long v;
        std::cin >> w >> v;
        for (int c = cap; c >= w; --c)  // descending: each item used at most once
            best[c] = std::max(best[c], best[c - w] + v);
    }
    std::cout << best[cap] << '\n';
}
