#include <algorithm>
#include <iostream>
#include <vector>

int main() {
    int n;
    std::cin >> n;
    std::vector<int> a(n), best(n, 1);
    for (int& x : a) std::cin >> x;
    int answer = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < i; ++j)
            if (a[j] < a[i]) best[i] = std::max(best[i], best[j] + 1);
        answer = std::max(answer, best[i]);
    }
    std::cout << answer << "\n";
}
