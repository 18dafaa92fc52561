#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<int> a(n);
    for (int& x : a) std::scanf("%d", &x);
    std::sort(a.begin(), a.end());
    std::printf("%d\n", (int)(std::unique(a.begin(), a.end()) - a.begin()));
}
