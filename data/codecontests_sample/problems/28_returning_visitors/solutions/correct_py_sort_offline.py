import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    a = list(map(int, data[1:n + 1]))
    order = sorted(range(n), key=lambda i: (a[i], i))
    ans = [0] * n
    for k in range(1, n):
        i, j = order[k - 1], order[k]
        if a[i] == a[j]:
            ans[j] = ans[i] + 1
    print("\n".join(map(str, ans)))


main()
