#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<long long> v(n);
    for (int i = 0; i < n; i++) cin >> v[i];
    long long ans = 0;
    while (v.size() > 1) {
        // find the two smallest piles
        int m1 = 0;
        for (int i = 1; i < (int)v.size(); i++)
            if (v[i] < v[m1]) m1 = i;
        swap(v[m1], v.back());
        long long a = v.back();
        v.pop_back();
        int m2 = 0;
        for (int i = 1; i < (int)v.size(); i++)
            if (v[i] < v[m2]) m2 = i;
        v[m2] += a;
        ans += v[m2];
    }
    cout << ans << endl;
    return 0;
}
