#include <iostream>
#include <map>
#include <string>
using namespace std;

int main() {
    int n;
    cin >> n;
    map<string, long long> groups;
    for (int i = 0; i < n; i++) {
        string s;
        cin >> s;
        int cnt[26] = {0};
        for (char c : s) cnt[c - 'a']++;
        // signature: the 26 letter counts, e.g. "1#0#2#..."
        string key;
        for (int c = 0; c < 26; c++) key += to_string(cnt[c]) + "#";
        groups[key]++;
    }
    long long total = 0;
    for (auto &g : groups) total += g.second * (g.second - 1) / 2;
    cout << total << endl;
    return 0;
}
