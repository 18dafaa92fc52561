#include <bits/stdc++.h>
using namespace std;

int a[200005];

int main() {
    int n;
    long long s;
    scanf("%d %lld", &n, &s);
    for (int i = 0; i < n; i++) scanf("%d", &a[i]);
    long long ans = 0;
    int sum = 0, j = 0;
    for (int i = 0; i < n; i++) {
        sum += a[i];
        while (sum > s) sum -= a[j++];
        ans += i - j + 1;
    }
    printf("%lld\n", ans);
}
