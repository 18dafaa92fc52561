#include <iostream>

int main() {
    unsigned long long n;
    std::cin >> n;
    const unsigned long long MOD = 1000000007ULL;
    unsigned long long a = 0, b = 1;
    for (unsigned long long i = 0; i < n; ++i) {
        unsigned long long c = (a + b) % MOD;
        a = b;
        b = c;
    }
    std::cout << a << "\n";
}
