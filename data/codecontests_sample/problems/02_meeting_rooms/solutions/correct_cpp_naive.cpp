#include <bits/stdc++.h>
using namespace std;

int l[200005], r[200005];

int main() {
    int n;
    cin >> n;
    for (int i = 0; i < n; i++) cin >> l[i] >> r[i];
    // the maximum overlap is reached at the start of some meeting
    int ans = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < n; j++)
            if (l[j] <= l[i] && l[i] < r[j]) c++;
        ans = max(ans, c);
    }
    cout << ans << endl;
    return 0;
}
