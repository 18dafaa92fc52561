#include <cstdio>
#include <vector>
#include <algorithm>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<int> st(n), en(n);
    for (int i = 0; i < n; i++) scanf("%d %d", &st[i], &en[i]);
    sort(st.begin(), st.end());
    sort(en.begin(), en.end());
    // a meeting that ends at time t frees its room for a meeting starting at t
    int rooms = 0, best = 0, j = 0;
    for (int i = 0; i < n; i++) {
        while (j < n && en[j] <= st[i]) { j++; rooms--; }
        rooms++;
        if (rooms > best) best = rooms;
    }
    printf("%d\n", best);
    return 0;
}
