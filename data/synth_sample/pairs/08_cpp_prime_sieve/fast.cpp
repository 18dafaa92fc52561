#include <cstdio>
#include <vector>

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<bool> composite(n + 1, false);
    int count = 0, largest = 0;
    for (long long i = 2; i <= n; ++i) {
        if (composite[i]) continue;
        ++count;
        largest = (int)i;
        for (long long j = i * i; j <= n; j += i) composite[j] = true;
    }
    std::printf("%d %d\n", count, largest);
}
