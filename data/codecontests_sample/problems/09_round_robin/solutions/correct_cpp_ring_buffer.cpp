#include <bits/stdc++.h>
using namespace std;
typedef long long ll;

int ring[1 << 13];
ll need[5005], fin[5005];

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    ll q;
    cin >> n >> q;
    const int MASK = (1 << 13) - 1;
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++) {
        cin >> need[i];
        ring[tail++ & MASK] = i;
    }
    ll clock = 0;
    while (head != tail) {
        int p = ring[head++ & MASK];
        if (need[p] > q) {
            need[p] -= q;
            clock += q;
            ring[tail++ & MASK] = p;
        } else {
            clock += need[p];
            fin[p] = clock;
        }
    }
    for (int i = 0; i < n; i++) cout << fin[i] << (i + 1 < n ? ' ' : '\n');
}
