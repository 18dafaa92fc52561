#include <cstdio>
#include <string>
#include <vector>

int main() {
    int h, w, q;
    std::scanf("%d %d %d", &h, &w, &q);
    std::vector<long long> pre((h + 1) * (w + 1), 0);
    auto P = [&](int r, int c) -> long long& { return pre[r * (w + 1) + c]; };
    for (int r = 1; r <= h; ++r)
        for (int c = 1; c <= w; ++c) {
            int x;
            std::scanf("%d", &x);
            P(r, c) = x + P(r - 1, c) + P(r, c - 1) - P(r - 1, c - 1);
        }
    std::string out;
    while (q--) {
        int r1, c1, r2, c2;
        std::scanf("%d %d %d %d", &r1, &c1, &r2, &c2);
        long long s = P(r2, c2) - P(r1 - 1, c2) - P(r2, c1 - 1) + P(r1 - 1, c1 - 1);
        out += std::to_string(s);
        out += '\n';
    }
    std::fputs(out.c_str(), stdout);
}
