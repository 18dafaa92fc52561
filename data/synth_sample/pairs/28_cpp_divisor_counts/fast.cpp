#include <cstdio>
#include <vector>

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<int> d(n + 1, 0);
    for (int i = 1; i <= n; ++i)
        for (int j = i; j <= n; j += i) ++d[j];
    int best = 0, arg = 1;
    for (int i = 1; i <= n; ++i)
        if (d[i] > best) { best = d[i]; arg = i; }
    std::printf("%d %d\n", best, arg);
}
