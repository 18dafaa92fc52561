#include <iostream>
#include <vector>

int main() {
    int n, q;
    std::cin >> n >> q;
    std::vector<long long> a(n + 1);
    for (int i = 1; i <= n; ++i) std::cin >> a[i];
    while (q--) {
        int l, r;
        std::cin >> l >> r;
        long long s = 0;
        for (int i = l; i <= r; ++i) s += a[i];
        std::cout << s << std::endl;
    }
}
