#include <array>
#include <string>
#include <vector>

struct Trie {
    struct Node { std::array<int, 26> next; int count = 0; bool end = false; Node() { next.fill(-1); } };
    std::vector<Node> nodes{Node()};

    void insert(const std::string& word) {
        int cur = 0;
        for (char ch : word) {
            int c = ch - 'a';
            if (nodes[cur].next[c] == -1) {
                nodes[cur].next[c] = nodes.size();
                nodes.emplace_back();
            }
            cur = nodes[cur].next[c];
            nodes[cur].count++;
        }
        nodes[cur].end = true;
    }

    int count_prefix(const std::string& prefix) const {
        int cur = 0;
        for (char ch : prefix) {
            cur = nodes[cur].next[ch - 'a'];
            if (cur == -1) return 0;
        }
        return nodes[cur].count;
    }
};
