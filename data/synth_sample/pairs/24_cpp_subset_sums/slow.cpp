#include <iostream>
#include <vector>

int main() {
    int n, s;
    std::cin >> n >> s;
    std::vector<bool> reach(s + 1, false);
    reach[0] = true;
    for (int i = 0; i < n; ++i) {
        int w;
        std::cin >> w;
        for (int t = s; t >= w; --t)
            if (reach[t - w]) reach[t] = true;
    }
    int count = 0;
    for (int t = 1; t <= s; ++t) count += reach[t];
    std::cout << count << "\n";
}
