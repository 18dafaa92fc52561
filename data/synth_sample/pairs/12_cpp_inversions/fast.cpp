#include <cstdio>
#include <vector>

static long long sort_count(std::vector<int>& a, std::vector<int>& tmp, int lo, int hi) {
    if (hi - lo < 2) return 0;
    int mid = (lo + hi) / 2;
    long long inv = sort_count(a, tmp, lo, mid) + sort_count(a, tmp, mid, hi);
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        if (a[j] < a[i]) { inv += mid - i; tmp[k++] = a[j++]; }
        else tmp[k++] = a[i++];
    }
    while (i < mid) tmp[k++] = a[i++];
    while (j < hi) tmp[k++] = a[j++];
    for (k = lo; k < hi; ++k) a[k] = tmp[k];
    return inv;
}

int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<int> a(n), tmp(n);
    for (int& x : a) std::scanf("%d", &x);
    std::printf("%lld\n", sort_count(a, tmp, 0, n));
}
