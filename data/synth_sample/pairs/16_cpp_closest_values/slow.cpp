#include <cstdlib>
#include <iostream>
#include <vector>

int main() {
    int n;
    std::cin >> n;
    std::vector<long long> a(n);
    for (auto& x : a) std::cin >> x;
    long long best = -1;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            long long d = std::llabs(a[i] - a[j]);
            if (best < 0 || d < best) best = d;
        }
    std::cout << best << "\n";
}
