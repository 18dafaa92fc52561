#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<int> tails;  // tails[L] = smallest tail of an increasing subsequence of length L+1
    for (int i = 0; i < n; ++i) {
        int x;
        std::scanf("%d", &x);
        auto it = std::lower_bound(tails.begin(), tails.end(), x);
        if (it == tails.end()) tails.push_back(x);
        else *it = x;
    }
    std::printf("%zu\n", tails.size());
}
