#pragma once
#include <numeric>
#include <vector>

class UnionFind {
public:
    explicit UnionFind(int n) : parent_(n), size_(n, 1) {
        std::iota(parent_.begin(), parent_.end(), 0);
    }
    int find(int x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];  // path halving
            x = parent_[x];
        }
        return x;
    }
    bool unite(int a, int b) {
        a = find(a);
        b = find(b);
        if (a == b) return false;
        if (size_[a] < size_[b]) std::swap(a, b);
        parent_[b] = a;
        size_[a] += size_[b];
        return true;
    }
    int component_size(int x) { return size_[find(x)]; }

private:
    std::vector<int> parent_;
    std::vector<int> size_;
};
