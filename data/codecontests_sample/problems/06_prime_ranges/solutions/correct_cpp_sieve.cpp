#include <cstdio>
#include <cstring>

const int MAXV = 1000000;
bool composite[MAXV + 1];
int cnt[MAXV + 1];

int main() {
    composite[0] = composite[1] = true;
    for (int i = 2; (long long)i * i <= MAXV; i++)
        if (!composite[i])
            for (int j = i * i; j <= MAXV; j += i) composite[j] = true;
    for (int i = 1; i <= MAXV; i++) cnt[i] = cnt[i - 1] + (composite[i] ? 0 : 1);
    int q;
    scanf("%d", &q);
    while (q--) {
        int l, r;
        scanf("%d %d", &l, &r);
        printf("%d\n", cnt[r] - cnt[l - 1]);
    }
    return 0;
}
