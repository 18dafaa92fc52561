#pragma once
#include <vector>

// Binary indexed tree over 0-based positions: point add, prefix sum.
class Fenwick {
public:
    explicit Fenwick(int n) : tree_(n + 1, 0) {}
    void add(int i, long long delta) {
        for (++i; i < (int)tree_.size(); i += i & -i) tree_[i] += delta;
    }
    long long prefix(int i) const {  // sum of [0, i)
        long long s = 0;
        for (; i > 0; i -= i & -i) s += tree_[i];
        return s;
    }
    long long range(int l, int r) const { return prefix(r) - prefix(l); }

private:
    std::vector<long long> tree_;
};
