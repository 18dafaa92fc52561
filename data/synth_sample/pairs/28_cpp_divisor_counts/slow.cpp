#include <iostream>

int main() {
    int n;
    std::cin >> n;
    int best = 0, arg = 1;
    for (int i = 1; i <= n; ++i) {
        int count = 0;
        for (int d = 1; d * d <= i; ++d)
            if (i % d == 0) count += (d * d == i) ? 1 : 2;
        if (count > best) { best = count; arg = i; }
    }
    std::cout << best << " " << arg << "\n";
}
