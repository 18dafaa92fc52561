#include <bits/stdc++.h>
using namespace std;

int n, LOG;
vector<int> bit;

void add(int i, int d) {
    for (; i <= n; i += i & -i) bit[i] += d;
}

// smallest position p such that prefix sum(p) >= k
int kth(int k) {
    int pos = 0;
    for (int pw = LOG; pw > 0; pw >>= 1) {
        if (pos + pw <= n && bit[pos + pw] < k) {
            pos += pw;
            k -= bit[pos];
        }
    }
    return pos + 1;
}

int main() {
    long long k;
    scanf("%d %lld", &n, &k);
    bit.assign(n + 1, 0);
    for (int i = 1; i <= n; i++) {
        bit[i]++;
        int j = i + (i & -i);
        if (j <= n) bit[j] += bit[i];
    }
    LOG = 1;
    while (LOG * 2 <= n) LOG *= 2;
    string out;
    int idx = 0;  // 0-based rank of the current starting child among the remaining ones
    for (int alive = n; alive > 0; alive--) {
        idx = (int)((idx + k - 1) % alive);
        int p = kth(idx + 1);
        add(p, -1);
        out += to_string(p);
        out += (alive == 1 ? '\n' : ' ');
    }
    fputs(out.c_str(), stdout);
    return 0;
}
