import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1:n + 1]))
    size = 1
    while size < n:
        size *= 2
    mx = [0] * (2 * size)
    mx[size:size + n] = a
    for v in range(size - 1, 0, -1):
        mx[v] = mx[2 * v] if mx[2 * v] > mx[2 * v + 1] else mx[2 * v + 1]
    ans = []
    for i in range(n):
        x = a[i]
        # climb from leaf i until a right sibling subtree contains a value > x
        v = size + i
        found = -1
        while v > 1:
            if v & 1 == 0 and mx[v + 1] > x:
                v += 1
                # descend to the leftmost leaf with value > x
                while v < size:
                    v = 2 * v if mx[2 * v] > x else 2 * v + 1
                found = v - size + 1
                break
            v //= 2
        ans.append(found)
    print(" ".join(map(str, ans)))


main()
