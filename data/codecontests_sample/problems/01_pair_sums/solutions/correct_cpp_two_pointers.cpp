#include <cstdio>
#include <vector>
#include <algorithm>
using namespace std;

int main() {
    int n;
    long long k;
    if (scanf("%d %lld", &n, &k) != 2) return 0;
    vector<long long> a(n);
    for (int i = 0; i < n; i++) scanf("%lld", &a[i]);
    sort(a.begin(), a.end());
    long long ans = 0;
    int i = 0, j = n - 1;
    while (i < j) {
        if (a[i] + a[j] <= k) {
            ans += j - i;
            i++;
        } else {
            j--;
        }
    }
    printf("%lld\n", ans);
    return 0;
}
