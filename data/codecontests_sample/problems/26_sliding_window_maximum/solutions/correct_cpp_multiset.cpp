#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<int> a(n);
    for (int i = 0; i < n; i++) scanf("%d", &a[i]);
    multiset<int> win;
    for (int i = 0; i < n; i++) {
        win.insert(a[i]);
        if (i >= k) win.erase(win.find(a[i - k]));
        if (i >= k - 1) printf("%d ", *win.rbegin());
    }
    printf("\n");
}
