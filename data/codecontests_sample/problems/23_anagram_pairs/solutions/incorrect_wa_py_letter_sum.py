import sys
from collections import Counter

words = sys.stdin.read().split()[1:]
# two words are anagrams iff they have the same length and the same sum of letter codes (wrong!)
c = Counter((len(w), sum(map(ord, w))) for w in words)
print(sum(v * (v - 1) // 2 for v in c.values()))
