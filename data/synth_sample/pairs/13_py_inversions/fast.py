import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1:1 + n]))
    ranks = {v: i + 1 for i, v in enumerate(sorted(set(a)))}
    size = len(ranks)
    tree = [0] * (size + 1)
    inv = 0
    for seen, v in enumerate(a):
        r = ranks[v]
        # count earlier elements <= v, the rest are inversions
        s, i = 0, r
        while i > 0:
            s += tree[i]
            i -= i & -i
        inv += seen - s
        i = r
        while i <= size:
            tree[i] += 1
            i += i & -i
    print(inv)


main()
