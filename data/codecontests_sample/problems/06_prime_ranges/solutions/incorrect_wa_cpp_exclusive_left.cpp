#include <bits/stdc++.h>
using namespace std;

const int MX = 1e6 + 1;
int spf_cnt[MX];
bool np[MX];

int main() {
    np[0] = np[1] = 1;
    for (int i = 2; i < MX; i++)
        if (!np[i])
            for (long long j = 1LL * i * i; j < MX; j += i) np[j] = 1;
    for (int i = 1; i < MX; i++) spf_cnt[i] = spf_cnt[i - 1] + !np[i];
    int q;
    scanf("%d", &q);
    while (q--) {
        int l, r;
        scanf("%d%d", &l, &r);
        printf("%d\n", spf_cnt[r] - spf_cnt[l]);
    }
}
