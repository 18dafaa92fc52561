#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main() {
    int n, q;
    std::scanf("%d %d", &n, &q);
    int levels = 1;
    while ((1 << levels) <= n) ++levels;
    std::vector<std::vector<int>> sparse(levels, std::vector<int>(n));
    for (int i = 0; i < n; ++i) std::scanf("%d", &sparse[0][i]);
    for (int j = 1; j < levels; ++j)
        for (int i = 0; i + (1 << j) <= n; ++i)
            sparse[j][i] = std::min(sparse[j - 1][i], sparse[j - 1][i + (1 << (j - 1))]);
    std::vector<int> lg(n + 1, 0);
    for (int i = 2; i <= n; ++i) lg[i] = lg[i / 2] + 1;
    std::string out;
    while (q--) {
        int l, r;
        std::scanf("%d %d", &l, &r);
        --l;
        int j = lg[r - l];
        out += std::to_string(std::min(sparse[j][l], sparse[j][r - (1 << j)]));
        out += '\n';
    }
    std::fputs(out.c_str(), stdout);
}
