#include <iostream>

static bool is_prime(int x) {
    if (x < 2) return false;
    for (int d = 2; d < x; ++d) {
        if (x % d == 0) return false;
        if (d * d > x) break;
    }
    return true;
}

int main() {
    int n;
    std::cin >> n;
    int count = 0, largest = 0;
    for (int x = 1; x <= n; ++x)
        if (is_prime(x)) { ++count; largest = x; }
    std::cout << count << " " << largest << "\n";
}
