#include <iostream>
#include <string>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::string t, p;
    std::cin >> t >> p;
    // Knuth-Morris-Pratt failure function
    std::vector<int> fail(p.size(), 0);
    for (std::size_t i = 1, k = 0; i < p.size(); ++i) {
        while (k > 0 && p[i] != p[k]) k = fail[k - 1];
        if (p[i] == p[k]) ++k;
        fail[i] = k;
    }
    long long count = 0;
    for (std::size_t i = 0, k = 0; i < t.size(); ++i) {
        while (k > 0 && t[i] != p[k]) k = fail[k - 1];
        if (t[i] == p[k]) ++k;
        if (k == p.size()) { ++count; k = fail[k - 1]; }
    }
    std::cout << count << "\n";
}
