#include <iostream>
#include <string>

int main() {
    std::string t, p;
    std::cin >> t >> p;
    long long count = 0;
    for (std::size_t i = 0; i + p.size() <= t.size(); ++i) {
        bool match = true;
        for (std::size_t j = 0; j < p.size(); ++j)
            if (t[i + j] != p[j]) { match = false; break; }
        if (match) ++count;
    }
    std::cout << count << "\n";
}
