#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> v(n);
    for (int i = 0; i < n; i++) {
        cin >> v[i];
        cout << count(v.begin(), v.begin() + i, v[i]) << endl;
    }
    return 0;
}
