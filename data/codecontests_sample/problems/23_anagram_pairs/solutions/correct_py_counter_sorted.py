import sys
from collections import Counter


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    c = Counter(bytes(sorted(w)) for w in data[1:n + 1])
    print(sum(v * (v - 1) // 2 for v in c.values()))


main()
