#include <bits/stdc++.h>
using namespace std;

int sig[1000001];

int main() {
    int n;
    scanf("%d", &n);
    vector<int> a(n);
    int mx = 1;
    for (auto &x : a) { scanf("%d", &x); mx = max(mx, x); }
    for (int d = 1; d <= mx; d++)
        for (int m = d; m <= mx; m += d) sig[m] += d;
    int total = 0;
    for (int x : a) total += sig[x];
    printf("%d\n", total);
}
