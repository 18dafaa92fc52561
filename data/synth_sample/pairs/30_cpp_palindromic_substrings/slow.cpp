#include <iostream>
#include <string>

int main() {
    std::string s;
    std::cin >> s;
    const int n = s.size();
    long long total = 0;
    for (int i = 0; i < n; ++i)
        for (int j = i; j < n; ++j) {
            bool pal = true;
            for (int a = i, b = j; a < b; ++a, --b)
                if (s[a] != s[b]) { pal = false; break; }
            if (pal) ++total;
        }
    std::cout << total << "\n";
}
