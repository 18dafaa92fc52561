#include <cstdio>
#include <queue>
#include <vector>
using namespace std;

int main() {
    int n;
    long long q;
    scanf("%d %lld", &n, &q);
    vector<long long> rem(n), done(n);
    queue<int> qu;
    for (int i = 0; i < n; i++) {
        scanf("%lld", &rem[i]);
        qu.push(i);
    }
    long long t = 0;
    while (!qu.empty()) {
        int i = qu.front();
        qu.pop();
        if (rem[i] <= q) {
            t += rem[i];
            done[i] = t;
        } else {
            t += q;
            rem[i] -= q;
            qu.push(i);
        }
    }
    for (int i = 0; i < n; i++) printf("%lld%c", done[i], i + 1 == n ? '\n' : ' ');
    return 0;
}
