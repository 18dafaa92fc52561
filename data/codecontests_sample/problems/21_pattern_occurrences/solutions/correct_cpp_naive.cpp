#include <cstdio>
#include <cstring>

char t[200005], p[200005];

int main() {
    scanf("%s %s", t, p);
    int n = strlen(t), m = strlen(p);
    int ans = 0;
    for (int i = 0; i + m <= n; i++) {
        int j = 0;
        while (j < m && t[i + j] == p[j]) j++;
        if (j == m) ans++;
    }
    printf("%d\n", ans);
}
