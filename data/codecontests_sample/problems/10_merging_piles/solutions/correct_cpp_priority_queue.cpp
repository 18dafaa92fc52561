#include <cstdio>
#include <queue>
#include <vector>
#include <functional>
using namespace std;
typedef long long ll;

int main() {
    int n;
    scanf("%d", &n);
    priority_queue<ll, vector<ll>, greater<ll>> pq;
    for (int i = 0; i < n; i++) {
        ll x;
        scanf("%lld", &x);
        pq.push(x);
    }
    ll cost = 0;
    while (pq.size() > 1) {
        ll a = pq.top(); pq.pop();
        ll b = pq.top(); pq.pop();
        cost += a + b;
        pq.push(a + b);
    }
    printf("%lld\n", cost);
    return 0;
}
