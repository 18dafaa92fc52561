#include <iostream>
using namespace std;

int main() {
    char c, prev = 0;
    int cnt = 0;
    while (cin >> c) {
        if (c == prev) {
            cnt++;
        } else {
            if (cnt > 0) cout << prev << cnt;
            prev = c;
            cnt = 1;
        }
    }
    cout << prev << cnt << endl;
    return 0;
}
