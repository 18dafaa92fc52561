#include <iostream>
#include <vector>

int main() {
    int n, w;
    std::cin >> n >> w;
    std::vector<int> a(n);
    for (int& x : a) std::cin >> x;
    for (int i = 0; i + w <= n; ++i) {
        int m = a[i];
        for (int j = i + 1; j < i + w; ++j)
            if (a[j] > m) m = a[j];
        std::cout << m << (i + w < n ? " " : "\n");
    }
}
