#include <iostream>
#include <vector>

int main() {
    int n, q;
    std::cin >> n >> q;
    std::vector<int> a(n + 1);
    for (int i = 1; i <= n; ++i) std::cin >> a[i];
    while (q--) {
        int l, r;
        std::cin >> l >> r;
        int m = a[l];
        for (int i = l + 1; i <= r; ++i)
            if (a[i] < m) m = a[i];
        std::cout << m << std::endl;
    }
}
