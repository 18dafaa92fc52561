#include <cstdio>
#include <vector>
using namespace std;

int main() {
    int n;
    long long s;
    scanf("%d %lld", &n, &s);
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    long long ans = 0, sum = 0;
    int l = 0;
    for (int r = 0; r < n; r++) {
        sum += a[r];
        while (sum > s) sum -= a[l++];
        ans += r - l + 1;
    }
    printf("%lld\n", ans);
    return 0;
}
