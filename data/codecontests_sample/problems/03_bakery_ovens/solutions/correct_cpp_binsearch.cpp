#include <cstdio>
#include <vector>
#include <algorithm>
using namespace std;
typedef long long ll;

int n;
ll m;
vector<ll> t;

bool enough(ll T) {
    ll made = 0;
    for (int i = 0; i < n; i++) {
        made += T / t[i];
        if (made >= m) return true;
    }
    return false;
}

int main() {
    scanf("%d %lld", &n, &m);
    t.resize(n);
    for (int i = 0; i < n; i++) scanf("%lld", &t[i]);
    ll lo = 0, hi = *min_element(t.begin(), t.end()) * m;  // hi is always enough
    while (hi - lo > 1) {
        ll mid = lo + (hi - lo) / 2;
        if (enough(mid)) hi = mid;
        else lo = mid;
    }
    printf("%lld\n", hi);
    return 0;
}
