#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long k;
    cin >> n >> k;
    vector<int> v(n);
    iota(v.begin(), v.end(), 1);
    int pos = 0;
    while (!v.empty()) {
        pos = (pos + k - 1) % v.size();
        cout << v[pos] << ' ';
        v.erase(v.begin() + pos);
    }
    cout << endl;
}
