#include <iostream>
#include <vector>

int main() {
    int n;
    std::cin >> n;
    std::vector<int> seen;
    for (int i = 0; i < n; ++i) {
        int x;
        std::cin >> x;
        bool found = false;
        for (int v : seen)
            if (v == x) { found = true; break; }
        if (!found) seen.push_back(x);
    }
    std::cout << seen.size() << "\n";
}
