#include <bits/stdc++.h>
using namespace std;

int main() {
    static char sbuf[2005], tbuf[2005];
    scanf("%s %s", sbuf, tbuf);
    int n = strlen(sbuf), m = strlen(tbuf);
    vector<int> prev(m + 1), cur(m + 1);
    for (int j = 0; j <= m; j++) prev[j] = j;
    for (int i = 1; i <= n; i++) {
        cur[0] = i;
        for (int j = 1; j <= m; j++) {
            int best = prev[j - 1] + (sbuf[i - 1] != tbuf[j - 1]);
            best = min(best, prev[j] + 1);
            best = min(best, cur[j - 1] + 1);
            cur[j] = best;
        }
        swap(prev, cur);
    }
    printf("%d\n", prev[m]);
}
