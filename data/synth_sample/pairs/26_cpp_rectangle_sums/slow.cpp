#include <iostream>
#include <vector>

int main() {
    int h, w, q;
    std::cin >> h >> w >> q;
    std::vector<std::vector<int>> g(h + 1, std::vector<int>(w + 1));
    for (int r = 1; r <= h; ++r)
        for (int c = 1; c <= w; ++c) std::cin >> g[r][c];
    while (q--) {
        int r1, c1, r2, c2;
        std::cin >> r1 >> c1 >> r2 >> c2;
        long long s = 0;
        for (int c = c1; c <= c2; ++c)      // column-major walk over row vectors
            for (int r = r1; r <= r2; ++r) s += g[r][c];
        std::cout << s << "\n";
    }
}
