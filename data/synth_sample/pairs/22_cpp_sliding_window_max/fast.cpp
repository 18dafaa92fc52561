#include <cstdio>
#include <deque>
#include <string>
#include <vector>

int main() {
    int n, w;
    std::scanf("%d %d", &n, &w);
    std::vector<int> a(n);
    for (int& x : a) std::scanf("%d", &x);
    std::deque<int> dq;  // indices with decreasing values
    std::string out;
    for (int i = 0; i < n; ++i) {
        while (!dq.empty() && a[dq.back()] <= a[i]) dq.pop_back();
        dq.push_back(i);
        if (dq.front() <= i - w) dq.pop_front();
        if (i >= w - 1) {
            out += std::to_string(a[dq.front()]);
            out += i + 1 < n ? ' ' : '\n';
        }
    }
    std::fputs(out.c_str(), stdout);
}
