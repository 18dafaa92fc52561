#include <cstdio>
#include <cstring>

typedef long long ll;
const ll MOD = 1e9 + 7;

struct Mat {
    ll m[2][2];
};

Mat mul(const Mat &a, const Mat &b) {
    Mat c;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            c.m[i][j] = 0;
            for (int k = 0; k < 2; k++) c.m[i][j] = (c.m[i][j] + a.m[i][k] * b.m[k][j]) % MOD;
        }
    return c;
}

int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        ll n;
        scanf("%lld", &n);
        Mat r = {{{1, 0}, {0, 1}}};
        Mat base = {{{1, 1}, {1, 0}}};
        while (n > 0) {
            if (n & 1) r = mul(r, base);
            base = mul(base, base);
            n >>= 1;
        }
        printf("%lld\n", r.m[0][1]);
    }
    return 0;
}
