#include <iostream>
#include <vector>

int main() {
    int n;
    long long t;
    std::cin >> n >> t;
    std::vector<long long> a(n);
    for (auto& x : a) std::cin >> x;
    long long pairs = 0;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            if (a[i] + a[j] == t) ++pairs;
    std::cout << pairs << "\n";
}
