#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main() {
    std::string s;
    std::cin >> s;
    // Manacher on "#a#b#...#": radius r at center i gives (r + 1) / 2 palindromes
    std::string t = "#";
    for (char c : s) { t += c; t += '#'; }
    const int n = t.size();
    std::vector<int> rad(n, 0);
    long long total = 0;
    for (int i = 0, c = 0, r = 0; i < n; ++i) {
        int k = i < r ? std::min(rad[2 * c - i], r - i) : 0;
        while (i - k - 1 >= 0 && i + k + 1 < n && t[i - k - 1] == t[i + k + 1]) ++k;
        rad[i] = k;
        if (i + k > r) { c = i; r = i + k; }
        total += (k + 1) / 2;
    }
    std::cout << total << "\n";
}
